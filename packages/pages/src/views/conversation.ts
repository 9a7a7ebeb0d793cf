import {
  type ConversationPageRecord,
  formatIsoTime,
  formatNiceTime,
  type PageMessageRecord,
  type UserRecord,
} from '@convo/domain';
import { html } from 'hono/html';
import type { Html } from './layout.ts';

export const ANONYMOUS = 'Anonymous';

/** Media links are followed only to web addresses: never `javascript:` or `data:`. */
function webUrl(value: string | null): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

const authorName = (m: PageMessageRecord): string => (m.author.anonymous ? ANONYMOUS : m.author.name || ANONYMOUS);

/** When something happened: as the API says it, and as machines read it. */
export const time = (micros: bigint): Html =>
  html`<time datetime="${formatIsoTime(micros)}">${formatNiceTime(micros)}</time>`;

function media(m: PageMessageRecord): Html {
  const url = webUrl(m.downloadMediaUrl);
  if (!url) return html``;
  const seconds = m.recordedDurationSeconds > 0 ? ` (${m.recordedDurationSeconds} s)` : '';
  return html`<p><a href="${url}" rel="nofollow noopener">Download the ${m.messageType} message${seconds}</a></p>`;
}

/** One message; `link` is where its time points (its anchor on the page, or the page itself). */
export function message(
  m: PageMessageRecord,
  o: { showAuthor: boolean; link: string; anchor: boolean; newTab?: boolean },
): Html {
  const target = o.newTab ? html` target="_blank" rel="noopener"` : '';
  return html`<article class="message"${o.anchor ? html` id="message-${m.id}"` : ''}>
<header class="message-head">${o.showAuthor ? html`<span class="author">${authorName(m)}</span>` : ''}<a href="${o.link}"${target}>${time(m.createdAt)}</a></header>
<p class="text">${m.text}</p>
${media(m)}
</article>`;
}

const members = (users: UserRecord[]): Html =>
  users.length === 0
    ? html`<p class="empty">No members.</p>`
    : html`<ul class="members">${users.map((u) => html`<li>${u.name}</li>`)}</ul>`;

/** A conversation: its title, tags, members and messages, oldest first. */
export function conversation(c: ConversationPageRecord, pageUrl: string, o: { newTab?: boolean } = {}): Html {
  return html`<article>
<h1>${c.title}</h1>
<p class="meta">Started ${time(c.createdAt)}</p>
${
  c.tags.length > 0
    ? html`<h2 class="visually-hidden" id="tags-heading">Tags</h2><ul class="tags" aria-labelledby="tags-heading">${c.tags.map((t) => html`<li>${t.name}</li>`)}</ul>`
    : ''
}
<h2 id="members-heading">Members</h2>
${members(c.users)}
<h2 id="messages-heading">Messages</h2>
${
  c.messages.length === 0
    ? html`<p class="empty">No messages yet.</p>`
    : html`<ol class="messages" aria-labelledby="messages-heading">${c.messages.map(
        (m) =>
          html`<li>${message(m, {
            showAuthor: true,
            // On the page itself the anchor is enough; an embed links to the page.
            link: o.newTab ? `${pageUrl}#message-${m.id}` : `#message-${m.id}`,
            anchor: true,
            newTab: o.newTab,
          })}</li>`,
      )}</ol>`
}
</article>`;
}

/** The first words of a conversation, for link previews. */
export function excerpt(c: ConversationPageRecord, max = 200): string {
  const first = c.messages
    .find((m) => m.text.trim().length > 0)
    ?.text.trim()
    .replace(/\s+/g, ' ');
  if (!first) return `A conversation with ${c.messages.length} messages.`;
  const chars = Array.from(first);
  return chars.length <= max ? first : `${chars.slice(0, max - 1).join('')}…`;
}
