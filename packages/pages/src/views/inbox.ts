import {
  CONVERSATION_SOURCES,
  CONVERSATION_STATES,
  type InboxPage,
  type InboxPerson,
  type InboxRow,
  type MyConversation,
  type ShownInboxFilter,
  SOURCE_LABELS,
  STATE_LABELS,
  snippet,
  unverifiedName,
} from '@convo/domain';
import { html } from 'hono/html';
import { time } from './conversation.ts';
import type { Html } from './layout.ts';

/** Where page `n` of the inbox is, with the filter kept. */
function inboxHref(page: number, filter: ShownInboxFilter): string {
  const query = new URLSearchParams();
  if (filter.archived) query.set('archived', '1');
  if (filter.search) query.set('q', filter.search);
  if (filter.tag) query.set('tag', filter.tag);
  if (filter.state) query.set('state', filter.state);
  if (filter.assignee) query.set('assignee', filter.assignee);
  if (filter.source) query.set('source', filter.source);
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text ? `/?${text}` : '/';
}

/** A select of the filter form: "any" first, then each choice, the one in force selected. */
function choice(id: string, name: string, label: string, any: string, options: [string, string][], now: string): Html {
  return html`<p><label for="${id}">${label}</label><select id="${id}" name="${name}"><option value="">${any}</option>${options.map(
    ([value, text]) => html`<option value="${value}"${value === now ? html` selected` : ''}>${text}</option>`,
  )}</select></p>`;
}

/** Who a row's conversation is with: an anonymous writer without a name is "A visitor". */
const personName = (p: InboxPerson): string =>
  p.name === null ? 'A visitor' : p.verified ? p.name : unverifiedName(p.name);

/** One row: the title, who it is with, the latest words, and its triage at a glance. */
function row(r: InboxRow): Html {
  const words = r.last ? snippet(r.last) : '';
  const via = r.intakePage ?? SOURCE_LABELS[r.source];
  const count = r.messageCount === 1 ? '1 message' : `${r.messageCount} messages`;
  return html`<li class="${r.unread ? 'unread' : 'read'}">
<p class="inbox-title"><a href="/c/${r.slug}">${r.title}</a>${r.unread ? html` <span class="unread-mark">Unread</span>` : ''}${
    r.unplayed ? html` <span class="unplayed-mark">Our recording not played yet</span>` : ''
  }</p>
<p class="inbox-who">${
    r.person
      ? r.person.waiting
        ? html`With ${personName(r.person)} <span class="meta">via ${via}; they have not written yet.</span>`
        : html`${personName(r.person)} <span class="meta">via ${via}</span>`
      : html`<span class="meta">Via ${via}; nobody outside the team has written yet.</span>`
  }</p>
${
  r.last && words
    ? html`<p class="inbox-snippet"><span class="inbox-author">${r.last.author ?? 'A visitor'}:</span> ${words}</p>`
    : html`<p class="inbox-snippet empty">No messages yet.</p>`
}
<p class="meta"><span class="state state-${r.state}">${STATE_LABELS[r.state]}</span> · ${r.assignee ? `Assigned to ${r.assignee}` : 'Unassigned'} · ${r.anyoneCanPost ? '' : 'Private · '}${count} · latest ${time(r.lastActivityAt)}</p>
${r.tags.length > 0 ? html`<ul class="tags" aria-label="Tags">${r.tags.map((t) => html`<li>${t}</li>`)}</ul>` : ''}
</li>`;
}

/**
 * The team's inbox (or its archive): a filter (words, tag, state, assignee, source), the
 * conversations latest activity first, and the pages around. With JavaScript, j and k move
 * between the rows and Enter opens one.
 */
export function inbox(account: string, p: InboxPage): Html {
  const f = p.filter;
  const filtered = f.search !== '' || f.tag !== '' || f.state !== '' || f.assignee !== '' || f.source !== '';
  const here = f.archived ? 'Archive' : 'Inbox';
  return html`<div class="heading-row"><h1>${here}</h1><a class="button" href="/new">New conversation</a></div>
<p class="meta">${f.archived ? `The archived conversations of ${account}: one comes back to the inbox when someone outside the team writes.` : `The conversations of ${account}, latest activity first.`}</p>
<nav class="inbox-views" aria-label="Inbox or archive"><ul class="views"><li>${f.archived ? html`<a href="/">Inbox</a>` : html`<a href="/" aria-current="page">Inbox</a>`}</li><li>${
    f.archived ? html`<a href="/?archived=1" aria-current="page">Archive</a>` : html`<a href="/?archived=1">Archive</a>`
  }</li></ul></nav>
<form method="get" action="/" class="inbox-filter" role="search" aria-label="Filter the conversations">
${f.archived ? html`<input type="hidden" name="archived" value="1">` : ''}
<p><label for="inbox-search">Search titles and messages</label><input id="inbox-search" name="q" type="search" maxlength="255" value="${f.search}"></p>
${choice(
  'inbox-state',
  'state',
  'State',
  'Any state',
  CONVERSATION_STATES.map((s) => [s, STATE_LABELS[s]]),
  f.state,
)}
${choice(
  'inbox-assignee',
  'assignee',
  'Assigned to',
  'Anyone',
  [
    ['me', 'Me'],
    ['nobody', 'Nobody'],
  ],
  f.assignee,
)}
${choice(
  'inbox-source',
  'source',
  'Began via',
  'Anywhere',
  CONVERSATION_SOURCES.map((s) => [s, SOURCE_LABELS[s]]),
  f.source,
)}
<p><label for="inbox-tag">Tag</label><select id="inbox-tag" name="tag"><option value="">Any tag</option>${p.tags.map(
    (t) => html`<option value="${t}"${t.toLowerCase() === f.tag.toLowerCase() ? html` selected` : ''}>${t}</option>`,
  )}</select></p>
<p><button type="submit">Show</button>${filtered ? html` <a class="show-all" href="${f.archived ? '/?archived=1' : '/'}">Show all</a>` : ''}</p>
</form>
<div id="inbox-list" data-events="/events">
${
  p.rows.length === 0
    ? html`<p class="empty">${filtered ? 'No conversation matches.' : f.archived ? 'Nothing is archived.' : 'No conversations yet.'}</p>`
    : html`<p class="note keys-note" hidden>Keys: j and k move between conversations, Enter opens one.</p>
<ol class="inbox" aria-label="Conversations" data-keys>${p.rows.map(row)}</ol>`
}
${
  p.page > 1 || p.hasMore
    ? html`<nav class="pager" aria-label="Pages of the inbox"><ul>${
        p.page > 1 ? html`<li><a href="${inboxHref(p.page - 1, f)}">Newer</a></li>` : ''
      }${p.hasMore ? html`<li><a href="${inboxHref(p.page + 1, f)}">Older</a></li>` : ''}</ul></nav>`
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
