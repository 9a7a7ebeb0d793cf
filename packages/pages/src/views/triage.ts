import {
  CONVERSATION_STATES,
  type ConversationPageRecord,
  SOURCE_LABELS,
  STATE_LABELS,
  type TeamMember,
} from '@convo/domain';
import { html } from 'hono/html';
import { csrfField } from './forms.ts';
import type { Html } from './layout.ts';

/*
 * The team's triage of a conversation on its page: its state, who it is assigned to, its tags,
 * the archive, and (for owners and admins) the way to delete it. Plain forms: no script needed.
 */

/** A refused triage form, as it was sent. */
export interface TriageDraft {
  tags: string;
  problem: string;
}

/** What the team sees at the top of its panel beside a conversation. */
export function triageForm(
  c: ConversationPageRecord,
  state: { csrf: string; team: readonly TeamMember[]; deletes: boolean; draft?: TriageDraft | undefined },
): Html {
  const t = c.triage;
  const action = `/c/${c.slug}/triage#triage`;
  const tags = state.draft?.tags ?? c.tags.map((tag) => tag.name).join(', ');
  return html`<section id="triage" aria-labelledby="triage-heading" class="manage">
<h2 id="triage-heading">Triage</h2>
<p class="meta">Began via ${SOURCE_LABELS[t.source]}${t.archived ? ' · archived' : ''}</p>
${state.draft ? html`<p class="problem" role="alert">${state.draft.problem}</p>` : ''}
<form method="post" action="${action}">
${csrfField(state.csrf)}
<p><label for="triage-state">State</label><select id="triage-state" name="state">${CONVERSATION_STATES.map(
    (s) => html`<option value="${s}"${s === t.state ? html` selected` : ''}>${STATE_LABELS[s]}</option>`,
  )}</select></p>
<p><label for="triage-assignee">Assigned to</label><select id="triage-assignee" name="assignee"><option value="">Nobody</option>${state.team.map(
    (m) => html`<option value="${m.email}"${m.id === t.assigneeId ? html` selected` : ''}>${m.name}</option>`,
  )}</select></p>
<p><label for="triage-tags">Tags</label><input id="triage-tags" name="tags" maxlength="2000" value="${tags}" aria-describedby="triage-tags-note"></p>
<p class="note" id="triage-tags-note">Separated by commas.</p>
<p><button type="submit">Save</button></p>
</form>
<form method="post" action="${action}" class="inline">
${csrfField(state.csrf)}<input type="hidden" name="archived" value="${t.archived ? 'false' : 'true'}">
<p><button type="submit" class="secondary">${t.archived ? 'Move back to the inbox' : 'Archive'}</button></p>
</form>
${state.deletes ? html`<p><a href="/c/${c.slug}/delete" class="danger">Delete this conversation…</a></p>` : ''}
</section>`;
}

/** The question before a conversation is deleted for good. */
export function confirmDelete(c: { title: string; slug: string; messageCount: number }, csrf: string): Html {
  const what =
    c.messageCount === 0
      ? 'It has no messages.'
      : c.messageCount === 1
        ? 'Its one message goes with it, recording and all.'
        : `Its ${c.messageCount} messages go with it, recordings and all.`;
  return html`<h1>Delete “${c.title}”?</h1>
<p>The conversation goes for good. ${what} Its address and embeds stop working. This cannot be undone.</p>
<form method="post" action="/c/${c.slug}/delete">
${csrfField(csrf)}
<p><button type="submit" class="danger">Delete for good</button> <a href="/c/${c.slug}#triage">Keep it</a></p>
</form>`;
}

/** After a conversation is deleted. */
export const deleted = (): Html =>
  html`<h1>Conversation deleted</h1>
<p>It is gone, with its messages and recordings.</p>
<p><a href="/">Back to the inbox</a></p>`;

/** A refused start: why, and what was sent, to fill the form again. */
export interface StartProblem {
  message: string;
  fields: Map<string, string[]>;
}

/** The team's "New conversation" form: works without JavaScript; nothing is written until it is sent. */
export function newConversationForm(state: {
  csrf: string;
  submitKey: string;
  problem?: StartProblem | undefined;
  /** A title to start from (a link may suggest one: "Welcome recording" from the intake pages). */
  title?: string | undefined;
}): Html {
  const p = state.problem;
  const sent = (name: string, otherwise = '') => p?.fields.get(name)?.[0] ?? otherwise;
  const visibility = sent('visibility', 'private');
  const option = (value: string, label: string, hint: string) =>
    html`<p class="check"><input type="radio" id="visibility-${value}" name="visibility" value="${value}"${visibility === value ? html` checked` : ''}><label for="visibility-${value}">${label} <span class="meta">${hint}</span></label></p>`;
  return html`<h1>New conversation</h1>
${p ? html`<p class="problem" role="alert">${p.message}</p>` : ''}
<form method="post" action="/new" class="new-conversation">
${csrfField(state.csrf)}<input type="hidden" name="submit" value="${state.submitKey}">
<p><label for="new-title">Title</label><input id="new-title" name="title" maxlength="255" required value="${sent('title', state.title ?? '')}"></p>
<p><label for="new-text">First message (optional)</label><textarea id="new-text" name="text" rows="5">${sent('text')}</textarea></p>
<fieldset><legend>Send it to (optional)</legend>
<p><label for="new-to">E-mail address</label><input id="new-to" name="to" type="email" autocomplete="off" maxlength="320" value="${sent('to')}"></p>
<p><label for="new-to-name">Their name, if they are new here</label><input id="new-to-name" name="to_name" autocomplete="off" maxlength="255" value="${sent('to_name')}"></p>
<p class="meta">They join the conversation and get an e-mail with its link and your first message.</p>
</fieldset>
<fieldset><legend>Who may see it</legend>
${option('private', 'Private', '(its members, and the team’s owners and admins)')}
${option('public', 'Anyone with the link', '(reads and replies)')}
</fieldset>
<p><button type="submit">Start the conversation</button></p>
<p class="meta">You can record a video message in it once it is started.</p>
</form>`;
}
