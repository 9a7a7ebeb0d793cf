import type { InboxPage, MyConversation } from '@convo/domain';
import { html } from 'hono/html';
import { time } from './conversation.ts';
import type { Html } from './layout.ts';

/** Where page `n` of the inbox is, with the filter kept. */
function inboxHref(page: number, filter: InboxPage['filter']): string {
  const query = new URLSearchParams();
  if (filter.search) query.set('q', filter.search);
  if (filter.tag) query.set('tag', filter.tag);
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text ? `/?${text}` : '/';
}

/** The team's inbox: a filter (title, tag), the conversations latest activity first, and the pages around. */
export function inbox(account: string, p: InboxPage): Html {
  const filtered = p.filter.search !== '' || p.filter.tag !== '';
  return html`<h1>Inbox</h1>
<p class="meta">The conversations of ${account}, latest activity first.</p>
<form method="get" action="/" class="inbox-filter" role="search" aria-label="Filter the conversations">
<p><label for="inbox-search">Title contains</label><input id="inbox-search" name="q" maxlength="255" value="${p.filter.search}"></p>
<p><label for="inbox-tag">Tag</label><select id="inbox-tag" name="tag"><option value="">Any tag</option>${p.tags.map(
    (t) =>
      html`<option value="${t}"${t.toLowerCase() === p.filter.tag.toLowerCase() ? html` selected` : ''}>${t}</option>`,
  )}</select></p>
<p><button type="submit">Show</button>${filtered ? html` <a href="/">Show all</a>` : ''}</p>
</form>
<div id="inbox-list" data-events="/events">
${
  p.rows.length === 0
    ? html`<p class="empty">${filtered ? 'No conversation matches.' : 'No conversations yet.'}</p>`
    : html`<ol class="inbox" aria-label="Conversations">${p.rows.map(
        (r) => html`<li class="${r.unread ? 'unread' : 'read'}">
<p class="inbox-title"><a href="/c/${r.slug}">${r.title}</a>${r.unread ? html` <span class="unread-mark">Unread</span>` : ''}</p>
<p class="meta">${r.anyoneCanPost ? '' : 'Private · '}${r.messageCount === 1 ? '1 message' : `${r.messageCount} messages`} · latest ${time(r.lastActivityAt)}</p>
${r.tags.length > 0 ? html`<ul class="tags" aria-label="Tags">${r.tags.map((t) => html`<li>${t}</li>`)}</ul>` : ''}
</li>`,
      )}</ol>`
}
${
  p.page > 1 || p.hasMore
    ? html`<nav class="pager" aria-label="Pages of the inbox"><ul>${
        p.page > 1 ? html`<li><a href="${inboxHref(p.page - 1, p.filter)}">Newer</a></li>` : ''
      }${p.hasMore ? html`<li><a href="${inboxHref(p.page + 1, p.filter)}">Older</a></li>` : ''}</ul></nav>`
    : ''
}
</div>`;
}

/** A participant's own conversations, above the account's intake form or landing page. */
export function myConversations(rows: readonly MyConversation[]): Html {
  if (rows.length === 0) return html``;
  return html`<section class="mine" aria-labelledby="mine-heading">
<h2 id="mine-heading">My conversations</h2>
<ol class="inbox" aria-label="My conversations">${rows.map(
    (r) => html`<li class="read">
<p class="inbox-title"><a href="/c/${r.slug}">${r.title}</a></p>
<p class="meta">${r.anyoneCanPost ? '' : 'Private · '}latest ${time(r.lastActivityAt)}</p>
</li>`,
  )}</ol>
</section>`;
}
