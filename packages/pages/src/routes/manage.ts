import {
  changeIntakePage,
  changeWorkflow,
  createIntakePage,
  createMessageTemplate,
  createWorkflow,
  DomainError,
  deleteMessageTemplate,
  getTeam,
  isDomainError,
  isTeamRole,
  listIntakePages,
  listMessageTemplates,
  listWorkflows,
  managesIntake,
  parseIntakePageInput,
  parseMessageTemplateInput,
  parseWorkflowName,
  type ReceivedFile,
  recordIntakeWelcome,
  removeRecording,
  runsConversation,
  startTeamConversation,
  updateMessageTemplate,
  updateTeamMember,
  WELCOME_CHOICES,
} from '@convo/domain';
import { Hono } from 'hono';
import { busy, notFound, type PageStatus, page } from '../frame.ts';
import type { SiteKit } from '../posting.ts';
import { field, type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import {
  intakePagesPage,
  type ManageProblem,
  teamPage,
  templatesPage,
  welcomeRecorderPage,
  workflowsPage,
} from '../views/manage.ts';
import { newConversationForm, type StartProblem } from '../views/triage.ts';
import { stepsFromForm } from '../workflow-form.ts';

/** An id in a path: digits that fit the column, else the page is missing. */
const ID = /^[1-9]\d{0,8}$/;

/** A checkbox: sent as `on` when ticked, absent when not. */
const ticked = (fields: Map<string, string[]>, name: string) => field(fields, name) === 'on';

/**
 * The steps a workflow's form sends: from the step editor's fields, or (its "Save the JSON") as
 * JSON, a typing mistake refused as the API refuses a body it cannot read.
 */
function stepsOf(fields: Map<string, string[]>): unknown {
  if (field(fields, 'editor') !== 'json') return stepsFromForm((name) => field(fields, name));
  try {
    return JSON.parse(field(fields, 'steps') ?? '');
  } catch (e) {
    throw new DomainError('invalid_input', `steps: not valid JSON (${(e as Error).message})`);
  }
}

/**
 * The team's own pages for the intake (`/manage/intake-pages`, `/manage/workflows`): the account's
 * owners and admins (`managesIntake`); for anyone else, a team `member` included, they do not exist
 * (the site's 404). Each form saves through the
 * API's use cases; a refusal is the page again, at that form, with the reason and what was sent.
 */
export function manageRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();
  const manages = (c: SiteContext) => managesIntake(viewerOf(c));

  async function intakePages(c: SiteContext, status: PageStatus, problem?: ManageProblem) {
    const account = c.env.account;
    const [pages, workflows, recordings] = await Promise.all([
      listIntakePages(deps.intakePageAdmin, account),
      listWorkflows(deps.workflows, account),
      deps.intakePageAdmin.teamRecordings(account.id, WELCOME_CHOICES),
    ]);
    const view = intakePagesPage(
      { host: account.host, accountKey: account.key, csrf: c.var.csrf, problem },
      pages,
      workflows,
      recordings,
    );
    return page(c, status, view, 'Intake pages', { form: true, headers: { 'cache-control': 'no-store' } });
  }

  async function workflows(c: SiteContext, status: PageStatus, problem?: ManageProblem) {
    const account = c.env.account;
    const [list, team, recordings, templates] = await Promise.all([
      listWorkflows(deps.workflows, account),
      getTeam(deps, account),
      deps.intakePageAdmin.teamRecordings(account.id, WELCOME_CHOICES),
      listMessageTemplates(deps, account),
    ]);
    const view = workflowsPage(
      { csrf: c.var.csrf, problem, team, recordings, templates: templates.message_templates },
      list,
    );
    return page(c, status, view, 'Workflows', { form: true, headers: { 'cache-control': 'no-store' } });
  }

  /**
   * A form's save: its redirect, or the list again with the reason (a missing item: the 404). A
   * form that may carry a recording (`recording`) is read with it; the act answers for it, and a
   * refusal removes it.
   */
  async function save(
    c: SiteContext,
    form: string,
    list: typeof intakePages,
    act: (fields: Map<string, string[]>, file?: ReceivedFile) => Promise<string>,
    options: { recording?: boolean } = {},
  ) {
    if (!manages(c)) return notFound(c);
    if (form !== 'new' && !ID.test(form)) return notFound(c);
    const read = options.recording ? await posting.readPostWithRecording(c) : await posting.readPost(c);
    if (read instanceof Response) return read;
    const { fields, file } = read instanceof Map ? { fields: read, file: undefined } : read;
    try {
      return c.redirect(await act(fields, file), 303);
    } catch (e) {
      if (file) await removeRecording(deps.media.store, file.key);
      if (!isDomainError(e)) throw e;
      if (e.code === 'recording_busy') return busy(c, e.message);
      if (e.code.endsWith('_not_found') || e.code === 'forbidden') return notFound(c);
      return list(c, 422, { form, message: e.message, fields });
    }
  }

  const pageInput = (fields: Map<string, string[]>) => {
    const workflow = field(fields, 'workflow') ?? '';
    const recording = (field(fields, 'welcome_recording') ?? '').trim();
    return parseIntakePageInput({
      name: field(fields, 'name') ?? '',
      key: field(fields, 'key') ?? '',
      title: field(fields, 'title') ?? '',
      welcome_text: (field(fields, 'welcome_text') ?? '').replace(/\r\n?/g, '\n'),
      conversation_title: field(fields, 'conversation_title') ?? '',
      welcome_recording_message_id: recording === '' ? null : /^\d{1,9}$/.test(recording) ? Number(recording) : -1,
      workflow_id: workflow === '' ? null : /^\d{1,9}$/.test(workflow) ? Number(workflow) : -1,
      team: (field(fields, 'team') ?? '').split(/[\s,]+/).filter((e) => e !== ''),
      allow_anonymous: ticked(fields, 'allow_anonymous'),
      primary: ticked(fields, 'primary'),
      disabled: ticked(fields, 'disabled'),
    });
  };

  routes.get('/manage/intake-pages', (c) => (manages(c) ? intakePages(c, 200) : notFound(c)));
  routes.post('/manage/intake-pages', posting.sameOrigin, (c) =>
    save(c, 'new', intakePages, async (fields) => {
      const key = field(fields, 'key')?.trim();
      const input = parseIntakePageInput({ name: field(fields, 'name') ?? '', ...(key ? { key } : {}) });
      const made = await createIntakePage(
        deps.intakePageAdmin,
        c.env.account,
        { ...input, name: input.name ?? '' },
        viewerOf(c),
      );
      return `/manage/intake-pages#page-${made.id}`;
    }),
  );
  routes.post('/manage/intake-pages/:id', posting.sameOrigin, (c) =>
    save(c, c.req.param('id'), intakePages, async (fields) => {
      const id = Number(c.req.param('id'));
      await changeIntakePage(deps.intakePageAdmin, c.env.account, id, pageInput(fields), viewerOf(c));
      return `/manage/intake-pages#page-${id}`;
    }),
  );

  /** The welcome recorder of one intake page (the owners' and admins'), with a refusal's reason. */
  async function welcomeRecorder(c: SiteContext, status: PageStatus, problem?: string) {
    const id = c.req.param('id') ?? '';
    const found = manages(c) && ID.test(id) ? await deps.intakePageAdmin.find(c.env.account.id, Number(id)) : null;
    if (!found) return notFound(c);
    const view = welcomeRecorderPage({
      csrf: c.var.csrf,
      page: { id: found.id, name: found.name, key: found.key },
      submitKey: crypto.randomUUID(),
      limits: deps.media.limits,
      problem,
    });
    return page(c, status, view, `Welcome video: ${found.name}`, {
      form: true,
      headers: { 'cache-control': 'no-store' },
    });
  }

  routes.get('/manage/intake-pages/:id/welcome', (c) => welcomeRecorder(c, 200));
  routes.post('/manage/intake-pages/:id/welcome', posting.sameOrigin, async (c) => {
    const id = c.req.param('id');
    const signedIn = c.var.signedIn;
    if (!signedIn || !manages(c) || !ID.test(id)) return notFound(c);
    const read = await posting.readPostWithRecording(c);
    if (read instanceof Response) return read;
    try {
      const outcome = await recordIntakeWelcome(
        deps,
        c.env.account,
        { viewer: viewerOf(c), name: signedIn.user.name },
        Number(id),
        {
          file: read.file,
          mediaKind: field(read.fields, 'media_kind'),
          poster: read.poster,
          submitKey: field(read.fields, 'submit'),
        },
        { link: posting.link(c.env.account), sender: c.env.visit.clientIp },
      );
      if (outcome.kind === 'busy') return busy(c, outcome.problem);
      if (outcome.kind === 'refused') return welcomeRecorder(c, 422, outcome.problem);
      return c.redirect(`/manage/intake-pages#page-${id}`, 303);
    } catch (e) {
      if (!isDomainError(e)) throw e;
      if (e.code.endsWith('_not_found') || e.code === 'forbidden') return notFound(c);
      return welcomeRecorder(c, 422, e.message);
    }
  });

  routes.get('/manage/workflows', (c) => (manages(c) ? workflows(c, 200) : notFound(c)));
  routes.post('/manage/workflows', posting.sameOrigin, (c) =>
    save(c, 'new', workflows, async (fields) => {
      const name = parseWorkflowName(field(fields, 'name') ?? '');
      const made = await createWorkflow(deps.workflows, c.env.account, { name, steps: stepsOf(fields) }, viewerOf(c));
      return `/manage/workflows#workflow-${made.id}`;
    }),
  );
  routes.post('/manage/workflows/:id', posting.sameOrigin, (c) =>
    save(c, c.req.param('id'), workflows, async (fields) => {
      const id = Number(c.req.param('id'));
      const name = parseWorkflowName(field(fields, 'name') ?? '');
      await changeWorkflow(
        deps.workflows,
        c.env.account,
        id,
        {
          name,
          steps: stepsOf(fields),
          disabled: ticked(fields, 'disabled'),
        },
        viewerOf(c),
      );
      return `/manage/workflows#workflow-${id}`;
    }),
  );

  async function templates(c: SiteContext, status: PageStatus, problem?: ManageProblem) {
    const account = c.env.account;
    const [list, recordings] = await Promise.all([
      listMessageTemplates(deps, account),
      deps.intakePageAdmin.teamRecordings(account.id, WELCOME_CHOICES),
    ]);
    const view = templatesPage({ csrf: c.var.csrf, problem, recordings }, list.message_templates);
    return page(c, status, view, 'Message templates', { form: true, headers: { 'cache-control': 'no-store' } });
  }

  /** A template's form: its recording kept (`keep`), none, a message's (its id), or the file it sent. */
  const templateInput = (fields: Map<string, string[]>, file: ReceivedFile | undefined) => {
    const recording = (field(fields, 'recording') ?? '').trim();
    return parseMessageTemplateInput({
      name: field(fields, 'name') ?? '',
      text: (field(fields, 'text') ?? '').replace(/\r\n?/g, '\n'),
      ...(recording === 'keep' || file
        ? {}
        : { recording_message_id: recording === '' ? null : /^\d{1,9}$/.test(recording) ? Number(recording) : -1 }),
    });
  };

  routes.get('/manage/templates', (c) => (manages(c) ? templates(c, 200) : notFound(c)));
  routes.post('/manage/templates', posting.sameOrigin, (c) =>
    save(
      c,
      'new',
      templates,
      async (fields, file) => {
        const input = templateInput(fields, file);
        const made = await createMessageTemplate(deps, c.env.account, input, viewerOf(c), { file });
        return `/manage/templates#template-${made.id}`;
      },
      { recording: true },
    ),
  );
  routes.post('/manage/templates/:id', posting.sameOrigin, (c) =>
    save(
      c,
      c.req.param('id'),
      templates,
      async (fields, file) => {
        const id = Number(c.req.param('id'));
        await updateMessageTemplate(deps, c.env.account, id, templateInput(fields, file), viewerOf(c), { file });
        return `/manage/templates#template-${id}`;
      },
      { recording: true },
    ),
  );
  routes.post('/manage/templates/:id/delete', posting.sameOrigin, (c) =>
    save(c, c.req.param('id'), templates, async () => {
      await deleteMessageTemplate(deps, c.env.account, Number(c.req.param('id')), viewerOf(c));
      return '/manage/templates';
    }),
  );

  /** The team's page, for everyone on the team (its forms for those who manage it); else the 404. */
  async function teamList(c: SiteContext, status: PageStatus, problem?: ManageProblem) {
    const signedIn = c.var.signedIn;
    if (!signedIn?.teamRole) return notFound(c);
    const view = teamPage(
      { csrf: c.var.csrf, viewer: { userId: signedIn.user.id, role: signedIn.teamRole }, problem },
      await getTeam(deps, c.env.account),
    );
    return page(c, status, view, 'Team', { form: true, headers: { 'cache-control': 'no-store' } });
  }

  routes.get('/manage/team', (c) => teamList(c, 200));
  routes.post('/manage/team', posting.sameOrigin, async (c) => {
    const signedIn = c.var.signedIn;
    if (!signedIn?.teamRole) return notFound(c);
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const email = field(fields, 'email') ?? '';
    const role = field(fields, 'role') ?? '';
    // Which form it was (a teammate's row, or the invitation): where a refusal is shown.
    const sent = field(fields, 'form') ?? '';
    const form = ID.test(sent) ? sent : 'new';
    try {
      if (role !== 'none' && !isTeamRole(role)) throw new DomainError('invalid_input', 'Choose a role.');
      const done = await updateTeamMember(
        deps,
        c.env.account,
        viewerOf(c),
        { email, name: field(fields, 'name'), role: role === 'none' ? null : role },
        signedIn.user.name,
      );
      return c.redirect(done.role ? `/manage/team#member-${done.id}` : '/manage/team', 303);
    } catch (e) {
      if (!isDomainError(e)) throw e;
      return teamList(c, e.code === 'forbidden' ? 403 : 422, { form, message: e.message, fields });
    }
  });

  /** The team's "New conversation" form (`/new`), for everyone on the team; else the 404. */
  const startForm = (c: SiteContext, status: PageStatus, problem?: StartProblem) =>
    page(
      c,
      status,
      newConversationForm({
        csrf: c.var.csrf,
        submitKey: problem?.fields.get('submit')?.[0] ?? crypto.randomUUID(),
        problem,
        title: c.req.query('title')?.slice(0, 255),
      }),
      'New conversation',
      { form: true, headers: { 'cache-control': 'no-store' } },
    );
  routes.get('/new', (c) => (runsConversation(viewerOf(c)) ? startForm(c, 200) : notFound(c)));
  routes.post('/new', posting.sameOrigin, async (c) => {
    const signedIn = c.var.signedIn;
    if (!signedIn || !runsConversation(viewerOf(c))) return notFound(c);
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const to = (field(fields, 'to') ?? '').trim();
    const outcome = await startTeamConversation(
      deps,
      c.env.account,
      { viewer: viewerOf(c), name: signedIn.user.name },
      {
        title: field(fields, 'title') ?? '',
        text: field(fields, 'text') ?? '',
        anyoneCanPost: field(fields, 'visibility') === 'public',
        to: to === '' ? undefined : { email: to, name: field(fields, 'to_name') },
        submitKey: field(fields, 'submit'),
      },
    );
    if (outcome.kind === 'refused') return startForm(c, 422, { message: outcome.problem, fields });
    return c.redirect(`/c/${outcome.slug}`, 303);
  });

  return routes;
}
