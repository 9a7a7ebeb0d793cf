import {
  changeConversationOnPage,
  changeMembersOnPage,
  changesVisibility,
  conversationMail,
  conversationUrl,
  deleteConversationOnPage,
  deletesConversation,
  endStartingPasses,
  isConversationState,
  isIndexable,
  type MessageTemplateRecord,
  MODERATION_ACTIONS,
  type ModerationAction,
  managesMembers,
  markConversationRead,
  messageHtmlText,
  moderateMessage,
  momentPageText,
  type PageMessageRecord,
  parseMoment,
  replyTemplateOf,
  runsConversation,
  seesInternalNotes,
  sendReply,
  tagsFromText,
  templateForReply,
  templatesForReply,
  threadUrl,
  viewConversation,
  viewThread,
} from '@convo/domain';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { uploadVisitor } from '../cookies.ts';
import { busy, notFound, type PageStatus, page, refused } from '../frame.ts';
import { handoffGrant, keepPass, readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { field, type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import { conversation, excerpt, threadView } from '../views/conversation.ts';
import * as forms from '../views/forms.ts';
import { conversationMailChoice } from '../views/mail-choices.ts';
import { templateRecordingName } from '../views/manage.ts';
import { hiddenMessages, messageActions } from '../views/moderation.ts';
import { confirmDelete, deleted, type TriageDraft, triageForm } from '../views/triage.ts';
import { liveAddresses } from './events.ts';
import { playedDisplay } from './plays.ts';
import { reactionsDisplay } from './reactions.ts';
import { transcriptsDisplay } from './transcripts.ts';

/** `?page=N` of a conversation (1-based); null without one; undefined when it is not a page number. */
export const pageParam = (c: SiteContext): number | null | undefined => {
  const given = c.req.query('page');
  if (given === undefined) return null;
  return /^[1-9]\d{0,8}$/.test(given) ? Number(given) : undefined;
};

/** A template as the reply form names it: its id, name and recording in words. */
const templateDraft = (t: MessageTemplateRecord): NonNullable<forms.ReplyDraft['template']> => ({
  id: t.id,
  name: t.name,
  recording: t.media
    ? templateRecordingName({ message_type: t.media.kind, recorded_duration_seconds: t.media.seconds })
    : null,
});

/** The thread a reply form names (`parent`): a message id, else none. */
const parentOf = (given: string | undefined): number | undefined =>
  given !== undefined && /^[1-9]\d{0,8}$/.test(given) ? Number(given) : undefined;

/** A thread's first message, when it is a recording: its length (the reply form then offers a moment of it). */
const recordingOf = (m: PageMessageRecord | undefined): { seconds: number } | undefined =>
  m && m.messageType !== 'text' ? { seconds: m.recordedDurationSeconds } : undefined;

/** A template's id as a form or a query gives it: digits that fit the column, else none. */
const templateIdOf = (given: string | undefined): number | null =>
  given !== undefined && /^[1-9]\d{0,8}$/.test(given) ? Number(given) : null;

/** A conversation's page (`conversation_url`), and the replies posted from its form. */
export function conversationRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  async function conversationPage(
    c: SiteContext,
    status: PageStatus,
    slug: string,
    drafts: {
      reply?: forms.ReplyDraft;
      members?: forms.MembersDraft;
      settings?: forms.SettingsDraft;
      triage?: TriageDraft;
    } = {},
  ) {
    const account = c.env.account;
    const pageNumber = status === 200 ? pageParam(c) : null;
    if (pageNumber === undefined) return notFound(c);
    const reader = await readerOf(deps, c, slug);
    const found = await viewConversation(deps, account, slug, reader.viewer, pageNumber, reader.granted);
    if (!found) return notFound(c);
    const url = conversationUrl(account, found.slug);
    // A visitor whose device started it posts as themselves (the pass's person, a member).
    const poster = c.var.signedIn?.user ?? found.users.find((u) => u.id === reader.viewer?.userId) ?? null;
    const viewer = viewerOf(c);
    // The team's templates; `?template=N` (the picker) starts the reply from one.
    const templates = await templatesForReply(deps, account.id, viewer);
    let draft = drafts.reply;
    const asked = status === 200 ? templateIdOf(c.req.query('template')) : null;
    const chosen = asked === null ? undefined : templates.find((t) => t.id === asked);
    if (chosen) {
      draft = {
        text: chosen.format === 'html' ? messageHtmlText(chosen.text) : chosen.text,
        template: templateDraft(chosen),
      };
    }
    const reply = forms.replyForm(found, {
      csrf: c.var.csrf,
      // Only needs to be unique per form: the platform's UUID is the cheapest source.
      submitKey: crypto.randomUUID(),
      signedIn: poster,
      draft,
      limits: deps.media.limits,
      templates: templates.map((t) => ({ id: t.id, name: t.name })),
      notes: seesInternalNotes(viewer),
    });
    await markConversationRead(deps, account, viewer, found.id);
    const mail = viewer
      ? conversationMailChoice(found.slug, await conversationMail(deps, account, viewer, found), c.var.csrf)
      : '';
    const team = managesMembers(viewer);
    // The team's panel beside the messages (a column on wide screens): triage, members, the
    // hidden messages, the settings. Everyone else sees the reply form after the messages alone.
    const [teamMembers, hidden] = team
      ? await Promise.all([deps.inbox.team(account.id), deps.moderation.hidden(account.id, found.id)])
      : [[], []];
    const panel = html`<aside class="team-panel" aria-label="For the team">${triageForm(found, {
      csrf: c.var.csrf,
      team: teamMembers,
      deletes: deletesConversation(viewer),
      draft: drafts.triage,
    })}${forms.membersForm(found, { csrf: c.var.csrf, draft: drafts.members })}${hiddenMessages(found.slug, hidden, c.var.csrf)}${
      runsConversation(viewer)
        ? forms.settingsForm(found, { csrf: c.var.csrf, visibility: changesVisibility(viewer), draft: drafts.settings })
        : ''
    }</aside>`;
    const actions = messageActions(found.slug, viewer, c.var.csrf, BigInt(Date.now()) * 1000n);
    const shown = [...found.messages, ...[...found.threads.values()].flatMap((t) => t.latest)];
    const main = html`${conversation(found, url, {
      team: account.name,
      accountKey: account.key,
      page: pageNumber,
      actions,
      threads: true,
      played: await playedDisplay({ deps, posting }, c, reader.viewer, shown),
      reactions: await reactionsDisplay({ deps, posting }, c, reader.viewer, found, shown),
      transcripts: await transcriptsDisplay({ deps }, c, reader.viewer, shown),
      live: liveAddresses(`/c/${found.slug}`, deps.live.position()),
    })}${reply}`;
    return page(
      c,
      status,
      team ? html`<div class="with-panel"><div>${main}${mail}</div>${panel}</div>` : html`${main}${mail}`,
      found.title,
      {
        form: true,
        wide: team,
        // A private conversation, seen by a member, is kept by no cache at all.
        ...(found.anyoneCanPost ? {} : { headers: { 'cache-control': 'no-store' } }),
        noindex: !isIndexable(found),
        canonical: pageNumber === null ? url : `${url}?page=${pageNumber}`,
        // Link previews only for what anyone may see.
        preview: found.anyoneCanPost
          ? { title: found.title, description: excerpt(found), url, siteName: account.name }
          : undefined,
      },
    );
  }

  routes.get('/c/:slug', (c) => conversationPage(c, 200, c.req.param('slug')));

  /** A thread's page (`/c/<slug>/m/<id>`, by any of its messages), its reply form replying in it. */
  async function threadPage(c: SiteContext, status: PageStatus, slug: string, id: string, draft?: forms.ReplyDraft) {
    const account = c.env.account;
    if (!/^[1-9]\d{0,9}$/.test(id)) return notFound(c);
    const reader = await readerOf(deps, c, slug);
    const found = await viewThread(deps, account, slug, Number(id), reader.viewer, reader.granted);
    if (!found) return notFound(c);
    const viewer = viewerOf(c);
    const url = conversationUrl(account, found.conversation.slug);
    const root = found.messages[0]?.id ?? Number(id);
    const reply = forms.replyForm(found.conversation, {
      csrf: c.var.csrf,
      submitKey: crypto.randomUUID(),
      signedIn: c.var.signedIn?.user ?? null,
      draft,
      limits: deps.media.limits,
      notes: seesInternalNotes(viewer),
      parentId: root,
      moment: recordingOf(found.messages[0]),
    });
    const actions = messageActions(found.conversation.slug, viewer, c.var.csrf, BigInt(Date.now()) * 1000n);
    return page(
      c,
      status,
      html`${threadView(found.conversation.slug, found.messages, url, {
        team: account.name,
        accountKey: account.key,
        actions,
        played: await playedDisplay({ deps, posting }, c, reader.viewer, found.messages),
        reactions: await reactionsDisplay({ deps, posting }, c, reader.viewer, found.conversation, found.messages),
        transcripts: await transcriptsDisplay({ deps }, c, reader.viewer, found.messages),
      })}${reply}`,
      'A thread',
      {
        form: true,
        noindex: true,
        canonical: threadUrl(url, root),
        ...(found.conversation.anyoneCanPost ? {} : { headers: { 'cache-control': 'no-store' } }),
      },
    );
  }

  routes.get('/c/:slug/m/:id', (c) => threadPage(c, 200, c.req.param('slug'), c.req.param('id')));

  // An embed's "Reply on" button: the start its frame holds, carried in the form's body (a
  // handoff signed for an hour, in place of a CSRF token), becomes this device's own pass.
  routes.post('/c/:slug/pass', posting.sameOrigin, async (c) => {
    const key = await deps.secrets.signingKey();
    const account = c.env.account;
    const fields = await posting.readPost(c, async (token) => handoffGrant(key, account.id, token) !== null);
    if (fields instanceof Response) return fields;
    const grant = handoffGrant(key, account.id, field(fields, 'csrf') ?? '');
    if (grant && !c.var.signedIn) await keepPass(deps, c, grant);
    return c.redirect(`/c/${c.req.param('slug')}#reply`, 303);
  });

  // A reply: text, a recording (the file input `media`, multipart, or a finished upload named by
  // `upload`), or both.
  routes.post('/c/:slug', posting.sameOrigin, async (c) => {
    const read = await posting.readPostWithRecording(c);
    if (read instanceof Response) return read;
    const { fields } = read;
    const account = c.env.account;
    const moment = parseMoment(field(fields, 'at'));
    const form = {
      text: field(fields, 'text') ?? '',
      name: field(fields, 'name'),
      email: field(fields, 'email'),
      submitKey: field(fields, 'submit'),
      internal: field(fields, 'internal') === 'true',
      parentId: parentOf(field(fields, 'parent')),
      at: field(fields, 'at'),
      atSeconds: moment ?? undefined,
    };
    const slug = c.req.param('slug');
    // A reply started from a template: the team's, else refused (the form offers none to anyone else).
    const templateGiven = field(fields, 'template');
    const templateId = templateIdOf(templateGiven);
    const template = templateId === null ? null : await templateForReply(deps, account.id, viewerOf(c), templateId);
    const refuse = async (problem: string) => {
      const reply = { ...form, problem, template: template ? templateDraft(template) : undefined };
      // A reply refused on a thread's page is that page again, with the reason; one naming a
      // thread the reader may not see is the conversation's page, with it.
      const again = form.parentId !== undefined ? await threadPage(c, 422, slug, String(form.parentId), reply) : null;
      return again && again.status !== 404 ? again : conversationPage(c, 422, slug, { reply });
    };
    if (field(fields, 'parent') !== undefined && form.parentId === undefined) {
      if (read.file) await deps.media.store.remove(read.file.key);
      return conversationPage(c, 422, slug, {
        reply: { ...form, problem: 'That message is not in this conversation.' },
      });
    }
    if (templateGiven !== undefined && !template) {
      if (read.file) await deps.media.store.remove(read.file.key);
      return refuse('That template is not in the team’s library (any more): write the reply without it.');
    }
    if (moment === null) {
      if (read.file) await deps.media.store.remove(read.file.key);
      return refuse(momentPageText({ kind: 'range' }));
    }
    const email = form.email?.trim().toLowerCase();
    if (email && !c.var.signedIn) {
      const limited = await posting.mailLimit(c, email);
      if (limited) {
        if (read.file) await deps.media.store.remove(read.file.key);
        return limited;
      }
    }
    const uploadId = field(fields, 'upload');
    const reader = await readerOf(deps, c, slug);
    const outcome = await sendReply(
      deps,
      account,
      slug,
      reader.viewer,
      { ...form, mediaKind: field(fields, 'media_kind'), template: template ? replyTemplateOf(template) : undefined },
      read.file
        ? { kind: 'file', file: read.file }
        : uploadId
          ? { kind: 'upload', id: uploadId, visitor: uploadVisitor(account.id, c.var.csrf) }
          : { kind: 'none' },
      { link: posting.link(account), granted: reader.granted, sender: c.env.visit.clientIp, poster: read.poster },
    );
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'refused':
        return refuse(outcome.problem);
      case 'busy':
        return busy(c, outcome.problem);
      case 'unavailable':
        return refused(c, 503, outcome.problem);
      case 'check_email':
        return page(c, 200, forms.checkEmail({ reply: true, back: `/c/${slug}` }), 'Check your e-mail');
      case 'posted':
        // POST/redirect/GET: reloading the page it lands on never posts again.
        return c.redirect(
          form.parentId !== undefined
            ? `${threadUrl(`/c/${outcome.slug}`, form.parentId)}#message-${outcome.messageId}`
            : `/c/${outcome.slug}#message-${outcome.messageId}`,
          303,
        );
    }
  });

  // The team adds someone by e-mail (`email`, `name`) or takes a member out (`remove`: their e-mail).
  routes.post('/c/:slug/members', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const slug = c.req.param('slug');
    if (field(fields, 'end_passes') !== undefined) {
      const ended = await endStartingPasses(deps, c.env.account, viewerOf(c), slug);
      if (ended.kind === 'not_found') return notFound(c);
      if (ended.kind === 'forbidden') return refused(c, 403, "Only the account's team ends a device's access.");
      return c.redirect(`/c/${ended.slug}#manage-members`, 303);
    }
    const removing = field(fields, 'remove');
    const request = {
      slug,
      email: removing ?? field(fields, 'email') ?? '',
      name: field(fields, 'name'),
      remove: removing !== undefined,
    };
    const outcome = await changeMembersOnPage(deps, c.env.account, viewerOf(c), request);
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'forbidden':
        return refused(c, 403, "Only the account's team adds people to a conversation or takes them out.");
      case 'refused':
        return conversationPage(c, 422, slug, {
          members: { email: request.email, name: request.name, problem: outcome.problem },
        });
      case 'done':
        return c.redirect(`/c/${outcome.change.slug}#manage-members`, 303);
    }
  });

  // The team renames it (`title`); its owners and admins also say who may see and post in it
  // (`visibility` marks that part of the form: a box left unticked is sent as nothing).
  routes.post('/c/:slug/settings', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const slug = c.req.param('slug');
    const ticked = (name: string) => field(fields, name) === 'true';
    const change = {
      title: field(fields, 'title') ?? '',
      visibility:
        field(fields, 'visibility') === undefined
          ? undefined
          : {
              anyoneCanPost: ticked('anyone_can_post'),
              allowAnonymousMessages: ticked('allow_anonymous_messages'),
              allowSearchEngines: ticked('allow_search_engines'),
            },
    };
    const outcome = await changeConversationOnPage(deps, c.env.account, viewerOf(c), slug, change);
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'forbidden':
        return refused(c, 403, outcome.problem);
      case 'refused':
        return conversationPage(c, 422, slug, { settings: { ...change, problem: outcome.problem } });
      case 'done':
        return c.redirect(`/c/${outcome.slug}#conversation-settings`, 303);
    }
  });

  // The team's triage (`state`, `assignee`: an address or "" for nobody, `tags`: one field, comma
  // separated, `archived`): each field changes only when the form sends it.
  routes.post('/c/:slug/triage', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const slug = c.req.param('slug');
    const given = (name: string) => field(fields, name);
    const state = given('state');
    const assignee = given('assignee');
    const tags = given('tags');
    const archived = given('archived');
    if (state !== undefined && !isConversationState(state)) return refused(c, 400, 'Choose a state from the list.');
    if (archived !== undefined && archived !== 'true' && archived !== 'false') {
      return refused(c, 400, 'Archive it, or move it back to the inbox.');
    }
    const triage = {
      state,
      assigneeEmail: assignee === undefined ? undefined : assignee.trim() || null,
      tags: tags === undefined ? undefined : tagsFromText(tags),
      archived: archived === undefined ? undefined : archived === 'true',
    };
    const outcome = await changeConversationOnPage(deps, c.env.account, viewerOf(c), slug, { triage });
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'forbidden':
        return refused(c, 403, outcome.problem);
      case 'refused':
        return conversationPage(c, 422, slug, { triage: { tags: tags ?? '', problem: outcome.problem } });
      case 'done':
        return c.redirect(`/c/${outcome.slug}#triage`, 303);
    }
  });

  // An owner or admin deletes it: a page that asks first, then the form that does it.
  routes.get('/c/:slug/delete', async (c) => {
    const viewer = viewerOf(c);
    const found = await viewConversation(deps, c.env.account, c.req.param('slug'), viewer);
    if (!found) return notFound(c);
    if (!deletesConversation(viewer))
      return refused(c, 403, "Only the account's owners and admins delete a conversation.");
    return page(c, 200, confirmDelete(found, c.var.csrf), `Delete ${found.title}?`, {
      form: true,
      headers: { 'cache-control': 'no-store' },
    });
  });

  routes.post('/c/:slug/delete', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const outcome = await deleteConversationOnPage(deps, c.env.account, viewerOf(c), c.req.param('slug'));
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'forbidden':
        return refused(c, 403, outcome.problem);
      case 'done':
        return page(c, 200, deleted(), 'Conversation deleted');
    }
  });

  // Hide a message or show it again (the team), or delete one's own (`action`).
  routes.post('/c/:slug/messages/:id', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const id = c.req.param('id');
    const action = field(fields, 'action');
    if (!/^\d{1,9}$/.test(id)) return notFound(c);
    if (!isModerationAction(action)) return refused(c, 400, 'Choose hide, show or delete.');
    const outcome = await moderateMessage(deps, c.env.account, viewerOf(c), c.req.param('slug'), Number(id), action);
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'forbidden':
        return refused(c, 403, outcome.problem);
      case 'done':
        return c.redirect(`/c/${outcome.slug}#${action === 'hide' ? 'hidden-heading' : 'messages-heading'}`, 303);
    }
  });

  return routes;
}

const isModerationAction = (value: string | undefined): value is ModerationAction =>
  MODERATION_ACTIONS.some((a) => a === value);
