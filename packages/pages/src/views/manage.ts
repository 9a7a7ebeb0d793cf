import {
  clockTime,
  type IntakePageView,
  type MediaLimits,
  type MessageTemplateView,
  ROLE_LABELS,
  TEAM_ROLES,
  type TeamMemberView,
  type TeamRecording,
  type TeamRole,
  type WorkflowDefinitionView,
} from '@convo/domain';
import { html } from 'hono/html';
import { KIND_NAMES } from './conversation.ts';
import { csrfField, recordingInput } from './forms.ts';
import type { Html } from './layout.ts';
import { recordingSelect } from './recordings.ts';
import { stepsEditor } from './workflow-steps.ts';

/*
 * The team's own pages for what runs the intake: its intake pages and its workflows, each a list
 * with a plain form per item and one to add another. They save through the same use cases as the
 * API (`POST/PATCH /api/v1/intake_pages`, `/workflows`), so the same rules refuse the same things.
 */

/** A form that was refused: which one (`new`, or an item's id), why, and what was sent. */
export interface ManageProblem {
  form: string;
  message: string;
  fields: Map<string, string[]>;
}

const value = (p: ManageProblem | undefined, form: string, name: string, saved: string): string =>
  p?.form === form ? (p.fields.get(name)?.[0] ?? '') : saved;

const checked = (p: ManageProblem | undefined, form: string, name: string, saved: boolean): Html | string =>
  (p?.form === form ? p.fields.get(name)?.[0] === 'on' : saved) ? html` checked` : '';

const problemAt = (p: ManageProblem | undefined, form: string): Html | string =>
  p?.form === form ? html`<p class="problem" role="alert">${p.message}</p>` : '';

/**
 * The team's pages; intake pages and workflows only for those who manage them (owners and admins).
 * Settings is in the signed-in bar beside it, for everyone signed in.
 */
export const manageNav = (intake = true): Html =>
  html`<nav class="manage-nav" aria-label="The team's pages"><ul><li><a href="/">Inbox</a></li>${
    intake
      ? html`<li><a href="/manage/intake-pages">Intake pages</a></li><li><a href="/manage/workflows">Workflows</a></li><li><a href="/manage/templates">Templates</a></li>`
      : ''
  }<li><a href="/manage/team">Team</a></li></ul></nav>`;

/** Who looks at the team's page: their id, and what they may change (nothing, for a member). */
export interface TeamViewer {
  userId: number;
  role: TeamRole;
}

const roleOptions = (roles: readonly TeamRole[], chosen: string) =>
  roles.map((r) => html`<option value="${r}"${r === chosen ? html` selected` : ''}>${ROLE_LABELS[r]}</option>`);

/**
 * The team: who is on it and with which role; for its owners and admins, a form per teammate to
 * change their role or take them off the team, and one to invite someone by address. What the
 * viewer may not change (their own place, the account's owner, an owner when they are an admin)
 * is shown without a form.
 */
export function teamPage(
  state: { csrf: string; viewer: TeamViewer; problem?: ManageProblem | undefined },
  team: TeamMemberView[],
): Html {
  const p = state.problem;
  const { viewer } = state;
  const manages = viewer.role !== 'member';
  const grantable: readonly TeamRole[] = viewer.role === 'owner' ? TEAM_ROLES : ['admin', 'member'];
  const row = (m: TeamMemberView) => {
    const form = String(m.id);
    const id = (name: string) => `member-${m.id}-${name}`;
    const fixed = m.account_owner
      ? 'Owns the account'
      : m.id === viewer.userId
        ? 'You'
        : !manages || (viewer.role !== 'owner' && m.role === 'owner')
          ? ''
          : null;
    const controls =
      fixed !== null
        ? html`<p class="meta">${fixed}</p>`
        : html`<form method="post" action="/manage/team#member-${m.id}" class="inline">
${csrfField(state.csrf)}<input type="hidden" name="form" value="${m.id}"><input type="hidden" name="email" value="${m.email}">
<label for="${id('role')}">Role of ${m.name}</label><select id="${id('role')}" name="role">${roleOptions(grantable, value(p, form, 'role', m.role))}</select>
<button type="submit">Change role</button>
</form>
<form method="post" action="/manage/team" class="inline">
${csrfField(state.csrf)}<input type="hidden" name="form" value="${m.id}"><input type="hidden" name="email" value="${m.email}"><input type="hidden" name="role" value="none">
<button type="submit" class="secondary">Remove ${m.name} from the team</button>
</form>`;
    return html`<li id="member-${m.id}" class="team-member"><div><strong>${m.name}</strong> <span class="meta">${m.email}</span> · ${ROLE_LABELS[m.role]}</div>
${problemAt(p, form)}${controls}</li>`;
  };
  // A refusal is shown at its form; one of a form this viewer is not shown (a member's post) above.
  const placed = p && ((p.form === 'new' && manages) || team.some((m) => String(m.id) === p.form));
  return html`<h1>Team</h1>
${p && !placed ? html`<p class="problem" role="alert">${p.message}</p>` : ''}
<p class="meta">Owners and admins see every conversation and manage the team, intake pages and workflows; only an owner makes someone an owner. Members see the account's public conversations and the private ones they are in. Someone taken off the team stays in their conversations as a participant.</p>
<ul class="manage-list team-list">${team.map(row)}</ul>
${
  manages
    ? html`<section id="invite" aria-labelledby="invite-heading" class="manage">
<h2 id="invite-heading">Invite a teammate</h2>
${problemAt(p, 'new')}
<form method="post" action="/manage/team#invite">
${csrfField(state.csrf)}
<p><label for="invite-email">E-mail address</label><input id="invite-email" name="email" type="email" autocomplete="off" maxlength="320" required value="${value(p, 'new', 'email', '')}"></p>
<p><label for="invite-name">Name (optional)</label><input id="invite-name" name="name" autocomplete="off" maxlength="255" value="${value(p, 'new', 'name', '')}"></p>
<p><label for="invite-role">Role</label><select id="invite-role" name="role">${roleOptions(grantable, value(p, 'new', 'role', 'member'))}</select></p>
<p><button type="submit">Invite</button></p>
<p class="meta">They get an e-mail saying where to sign in. Someone already in a conversation here joins the team with their account.</p>
</form>
</section>`
    : ''
}`;
}

export function intakePagesPage(
  state: { host: string; accountKey: string; csrf: string; problem?: ManageProblem | undefined },
  pages: IntakePageView[],
  workflows: WorkflowDefinitionView[],
  recordings: TeamRecording[] = [],
): Html {
  const p = state.problem;
  const workflowSelect = (form: string, id: string, current: number | null) => {
    const chosen = value(p, form, 'workflow', current === null ? '' : String(current));
    return html`<select id="${id}" name="workflow"><option value="">No workflow</option>${workflows.map(
      (w) =>
        html`<option value="${w.id}"${String(w.id) === chosen ? html` selected` : ''}>${w.name}${w.disabled ? ' (disabled)' : ''}</option>`,
    )}</select>`;
  };
  const item = (page: IntakePageView) => {
    const form = String(page.id);
    const id = (name: string) => `page-${page.id}-${name}`;
    return html`<li><section id="page-${page.id}" aria-labelledby="${id('heading')}" class="manage">
<h2 id="${id('heading')}">${page.name}${page.primary ? ' (primary)' : ''}${page.disabled ? ' (disabled)' : ''}</h2>
<p class="meta"><a href="/p/${page.key}">${state.host}/p/${page.key}</a>${page.primary ? html` · also at <a href="/">${state.host}/</a> for visitors` : ''}</p>
<p class="meta">Embed: <code>&lt;iframe src="${state.host}/embeds/p/${page.key}" title="${page.name}" allow="microphone; camera; display-capture" width="600" height="900"&gt;&lt;/iframe&gt;</code></p>
${problemAt(p, form)}
<form method="post" action="/manage/intake-pages/${page.id}#page-${page.id}">
${csrfField(state.csrf)}
<p><label for="${id('name')}">Name</label><input id="${id('name')}" name="name" maxlength="255" required value="${value(p, form, 'name', page.name)}"></p>
<p><label for="${id('key')}">Address key (/p/…)</label><input id="${id('key')}" name="key" maxlength="60" required value="${value(p, form, 'key', page.key)}"></p>
<p><label for="${id('title')}">Title visitors see</label><input id="${id('title')}" name="title" maxlength="255" value="${value(p, form, 'title', page.title)}"></p>
<p><label for="${id('conversation-title')}">How its conversations are titled</label><input id="${id('conversation-title')}" name="conversation_title" maxlength="200" aria-describedby="${id('conversation-title-hint')}" placeholder="{name}: {words}" value="${value(p, form, 'conversation_title', page.conversation_title)}"></p>
<p class="meta" id="${id('conversation-title-hint')}">{name} is the person (or “A visitor”), {words} their first words (or the kind of recording), {page} this page’s name, {date} the day. Empty: “{name}: {words}”, as “Tom Tester: I need help with my invoice”.</p>
<p><label for="${id('welcome')}">Welcome text</label><textarea id="${id('welcome')}" name="welcome_text" rows="3" maxlength="5000">${value(p, form, 'welcome_text', page.welcome_text)}</textarea></p>
<p><label for="${id('recording')}">Welcome recording, shown above the form</label>${recordingSelect({ id: id('recording'), name: 'welcome_recording' }, recordings, value(p, form, 'welcome_recording', page.welcome_recording_message_id === null ? '' : String(page.welcome_recording_message_id)))}</p>
<p class="meta">The team’s latest recordings. <a href="/manage/intake-pages/${page.id}/welcome">Record a new welcome video</a> for this page.</p>
<p><label for="${id('workflow')}">Workflow</label>${workflowSelect(form, id('workflow'), page.workflow_id)}</p>
<p><label for="${id('team')}">Team members who join each conversation (e-mails, one per line)</label><textarea id="${id('team')}" name="team" rows="2">${value(p, form, 'team', page.team.join('\n'))}</textarea></p>
<p class="check"><input type="checkbox" id="${id('anonymous')}" name="allow_anonymous"${checked(p, form, 'allow_anonymous', page.allow_anonymous)}><label for="${id('anonymous')}">Visitors may start anonymously</label></p>
<p class="check"><input type="checkbox" id="${id('primary')}" name="primary"${checked(p, form, 'primary', page.primary)}><label for="${id('primary')}">Primary page (at / for visitors)</label></p>
<p class="check"><input type="checkbox" id="${id('disabled')}" name="disabled"${checked(p, form, 'disabled', page.disabled)}><label for="${id('disabled')}">Disabled</label></p>
<p><button type="submit">Save ${page.name}</button></p>
</form>
</section></li>`;
  };
  return html`<h1>Intake pages</h1>
<p class="meta">Where anyone starts a conversation with the team. Changes apply to new conversations; the ones already started keep their copy of the workflow.</p>
${pages.length === 0 ? html`<p class="empty">No intake pages yet.</p>` : html`<ul class="manage-list">${pages.map(item)}</ul>`}
<section id="new-page" aria-labelledby="new-page-heading" class="manage">
<h2 id="new-page-heading">New intake page</h2>
${problemAt(p, 'new')}
<form method="post" action="/manage/intake-pages#new-page">
${csrfField(state.csrf)}
<p><label for="new-page-name">Name</label><input id="new-page-name" name="name" maxlength="255" required value="${value(p, 'new', 'name', '')}"></p>
<p><label for="new-page-key">Address key (/p/…; made from the name when empty)</label><input id="new-page-key" name="key" maxlength="60" value="${value(p, 'new', 'key', '')}"></p>
<p><button type="submit">Add the page</button></p>
</form>
</section>`;
}

/**
 * Recording an intake page's welcome video right there: one form, which the recorder (with
 * JavaScript) records into; without it, a file chosen or taken with the device's camera.
 */
export function welcomeRecorderPage(state: {
  csrf: string;
  page: { id: number; name: string; key: string };
  submitKey: string;
  limits: MediaLimits;
  problem?: string | undefined;
}): Html {
  const back = `/manage/intake-pages#page-${state.page.id}`;
  return html`<p class="meta"><a href="${back}">Back to the intake pages</a></p>
<h1>A welcome video for ${state.page.name}</h1>
<p>Visitors of <a href="/p/${state.page.key}">the page</a> see it above the form before they write. Say who you are and what happens after they send their message. Once sent it replaces the page’s welcome recording, and it is kept among the team’s recordings (in an archived conversation “Welcome video: ${state.page.name}”) to choose again.</p>
${state.problem ? html`<p class="problem" role="alert">${state.problem}</p>` : ''}
<form method="post" action="/manage/intake-pages/${state.page.id}/welcome" class="reply welcome" enctype="multipart/form-data" data-max-seconds="${state.limits.maxSeconds}">
${csrfField(state.csrf)}
<input type="hidden" name="submit" value="${state.submitKey}">
${recordingInput('welcome-media', state.limits)}
<p><button type="submit">Use it on the page</button></p>
</form>`;
}

/** What a new workflow's steps start as: one step, for the team to change. */
const EXAMPLE_STEPS = JSON.stringify(
  [{ trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['new'] } }],
  null,
  2,
);

export function workflowsPage(
  state: {
    csrf: string;
    problem?: ManageProblem | undefined;
    /** Whom a step may post as, and the recordings and templates it may post. */
    team: TeamMemberView[];
    recordings: TeamRecording[];
    templates: readonly { id: number; name: string }[];
  },
  workflows: WorkflowDefinitionView[],
): Html {
  const p = state.problem;
  /** The steps as fields, then the same as JSON for those who prefer it, each with its own save. */
  const steps = (
    form: string,
    prefix: string,
    saved: WorkflowDefinitionView['steps'],
    json: string,
  ) => html`${stepsEditor({
    prefix,
    steps: saved,
    sent: p?.form === form && p.fields.get('editor')?.[0] !== 'json' ? p.fields : undefined,
    team: state.team,
    recordings: state.recordings,
    templates: state.templates,
  })}
<p><button type="submit" name="editor" value="fields">Save the steps</button></p>
<details class="advanced"${p?.form === form && p.fields.get('editor')?.[0] === 'json' ? html` open` : ''}><summary>Advanced: the steps as JSON</summary>
<p><label for="${prefix}-steps">Steps (JSON: the API's WorkflowStep)</label><textarea id="${prefix}-steps" name="steps" rows="10" class="code" spellcheck="false">${value(p, form, 'steps', json)}</textarea></p>
<p><button type="submit" name="editor" value="json">Save the JSON</button></p>
</details>`;
  const item = (w: WorkflowDefinitionView) => {
    const form = String(w.id);
    const id = (name: string) => `workflow-${w.id}-${name}`;
    return html`<li><section id="workflow-${w.id}" aria-labelledby="${id('heading')}" class="manage">
<h2 id="${id('heading')}">${w.name}${w.disabled ? ' (disabled)' : ''}</h2>
${problemAt(p, form)}
<form method="post" action="/manage/workflows/${w.id}#workflow-${w.id}">
${csrfField(state.csrf)}
<p><label for="${id('name')}">Name</label><input id="${id('name')}" name="name" maxlength="255" required value="${value(p, form, 'name', w.name)}"></p>
<p class="check"><input type="checkbox" id="${id('disabled')}" name="disabled"${checked(p, form, 'disabled', w.disabled)}><label for="${id('disabled')}">Disabled (copied onto nothing new)</label></p>
${steps(form, `workflow-${w.id}`, w.steps, JSON.stringify(w.steps, null, 2))}
</form>
</section></li>`;
  };
  return html`<h1>Workflows</h1>
<p class="meta">What happens on its own in conversations started through an intake page: each step is a trigger (when) and an action (then what). A conversation keeps the copy it started with. The JSON under “Advanced” is the same steps as the API takes them (WorkflowStep).</p>
${workflows.length === 0 ? html`<p class="empty">No workflows yet.</p>` : html`<ul class="manage-list">${workflows.map(item)}</ul>`}
<section id="new-workflow" aria-labelledby="new-workflow-heading" class="manage">
<h2 id="new-workflow-heading">New workflow</h2>
${problemAt(p, 'new')}
<form method="post" action="/manage/workflows#new-workflow">
${csrfField(state.csrf)}
<p><label for="new-workflow-name">Name</label><input id="new-workflow-name" name="name" maxlength="255" required value="${value(p, 'new', 'name', '')}"></p>
${steps('new', 'new-workflow', [], EXAMPLE_STEPS)}
</form>
</section>`;
}

/** A template's recording in words: "Video, 0:42". */
export const templateRecordingName = (r: NonNullable<MessageTemplateView['recording']>): string =>
  `${KIND_NAMES[r.message_type] ?? 'Recording'}, ${clockTime(r.recorded_duration_seconds)}`;

/**
 * The team's message templates (`/manage/templates`, owners and admins): each with its form (name,
 * text, recording: kept, none, or one of the team's latest) and a button that deletes it, then the
 * form that adds one. The same use cases as `/api/v1/message_templates`.
 */
export function templatesPage(
  state: { csrf: string; problem?: ManageProblem | undefined; recordings: TeamRecording[] },
  templates: MessageTemplateView[],
): Html {
  const p = state.problem;
  const fields = (form: string, prefix: string, t: MessageTemplateView | null) => {
    const keep = t?.recording ? templateRecordingName(t.recording) : null;
    return html`<p><label for="${prefix}-name">Name</label><input id="${prefix}-name" name="name" maxlength="255" required value="${value(p, form, 'name', t?.name ?? '')}"></p>
<p><label for="${prefix}-text">Text</label><textarea id="${prefix}-text" name="text" rows="5" maxlength="10000" aria-describedby="${prefix}-text-note">${value(p, form, 'text', t?.text ?? '')}</textarea></p>
<p class="meta" id="${prefix}-text-note">Plain text, or simple HTML (paragraphs, bold, italics, links, lists, quotes, code). May be empty when the template has a recording: the reply written with it goes under the recording.</p>
<p><label for="${prefix}-recording">Recording</label>${recordingSelect(
      { id: `${prefix}-recording`, name: 'recording' },
      state.recordings,
      value(p, form, 'recording', keep ? 'keep' : ''),
      keep ? `Keep its recording (${keep})` : undefined,
    )}</p>
<p><label for="${prefix}-file">Or upload a recording (video or audio; it replaces the choice above)</label><input id="${prefix}-file" name="media" type="file" accept="video/*,audio/*"></p>`;
  };
  const item = (t: MessageTemplateView) => {
    const form = String(t.id);
    const prefix = `template-${t.id}`;
    return html`<li><section id="${prefix}" aria-labelledby="${prefix}-heading" class="manage">
<h2 id="${prefix}-heading">${t.name}</h2>
<p class="meta">${t.creator ? `By ${t.creator.name}` : 'By someone no longer on the team'}${t.recording ? ` · ${templateRecordingName(t.recording)}` : ''}</p>
${problemAt(p, form)}
<form method="post" action="/manage/templates/${t.id}#${prefix}" enctype="multipart/form-data">
${csrfField(state.csrf)}
${fields(form, prefix, t)}
<p><button type="submit">Save ${t.name}</button></p>
</form>
<form method="post" action="/manage/templates/${t.id}/delete" class="inline">
${csrfField(state.csrf)}
<button type="submit" class="secondary">Delete ${t.name}</button>
</form>
</section></li>`;
  };
  return html`<h1>Message templates</h1>
<p class="meta">Messages the team sends again and again. Anyone on the team picks one in a conversation’s reply form (“Use a template”), where it can still be changed before it is posted; workflows and the API post them as they are. Messages made from a template keep what they got when it changes or is deleted.</p>
${templates.length === 0 ? html`<p class="empty">No templates yet.</p>` : html`<ul class="manage-list">${templates.map(item)}</ul>`}
<section id="new-template" aria-labelledby="new-template-heading" class="manage">
<h2 id="new-template-heading">New template</h2>
${problemAt(p, 'new')}
<form method="post" action="/manage/templates#new-template" enctype="multipart/form-data">
${csrfField(state.csrf)}
${fields('new', 'new-template', null)}
<p><button type="submit">Add the template</button></p>
</form>
</section>`;
}
