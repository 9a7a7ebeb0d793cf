import { AUTHOR_DELETE_MINUTES, type HiddenMessage, type PageMessageRecord, type Viewer } from '@convo/domain';
import { html } from 'hono/html';
import { csrfField } from './forms.ts';
import type { Html } from './layout.ts';

/*
 * Moderation on a conversation's page: a Hide button under each message for the team, a Delete
 * button under a person's own message while it is young, and the hidden messages with a way back.
 */

const button = (slug: string, id: number, csrf: string, action: string, label: string, anchor: string): Html =>
  html`<form method="post" action="/c/${slug}/messages/${id}#${anchor}" class="inline">${csrfField(csrf)}<button type="submit" name="action" value="${action}" class="secondary small">${label}</button></form>`;

/** The buttons under one message for this reader, if any. */
export function messageActions(slug: string, viewer: Viewer, csrf: string, nowMicros: bigint) {
  const deleteUntil = BigInt(AUTHOR_DELETE_MINUTES * 60 * 1_000_000);
  return (m: PageMessageRecord): Html | string => {
    if (!viewer) return '';
    const own = !m.author.anonymous && m.author.id === viewer.userId && nowMicros - m.createdAt < deleteUntil;
    const team = viewer.teamRole !== null;
    if (!own && !team) return '';
    return html`<div class="message-actions">${own ? button(slug, m.id, csrf, 'delete', 'Delete my message', 'messages-heading') : ''}${
      team ? button(slug, m.id, csrf, 'hide', 'Hide', 'hidden-heading') : ''
    }</div>`;
  };
}

/** For the team: the conversation's hidden messages, each with a way back. */
export function hiddenMessages(slug: string, hidden: HiddenMessage[], csrf: string): Html {
  return html`<section aria-labelledby="hidden-heading" class="hidden-messages">
<h2 id="hidden-heading">Hidden messages</h2>
${
  hidden.length === 0
    ? html`<p class="empty">None. Hidden messages leave the page, the embeds, the API and the mail; only the team sees them here.</p>`
    : html`<ul>${hidden.map(
        (m) =>
          html`<li><p><strong>${m.authorName ?? 'Anonymous'}</strong>: ${Array.from(m.text).slice(0, 200).join('')}</p>${button(slug, m.id, csrf, 'show', 'Show again', 'messages-heading')}</li>`,
      )}</ul>`
}
</section>`;
}
