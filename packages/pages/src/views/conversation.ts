import {
  type ConversationPageRecord,
  clockTime,
  formatIsoTime,
  formatNiceTime,
  type KeptTranscript,
  messagePages,
  PAGE_MESSAGES,
  type PageMessageRecord,
  type PlaySummary,
  pageOf,
  playedByText,
  playThreshold,
  safeMessageHtml,
  type ThreadPreview,
  threadUrl,
  type UserRecord,
  unverifiedName,
} from '@convo/domain';
import { html, raw } from 'hono/html';
import { find } from 'linkifyjs';
import type { Html } from './layout.ts';
import { type ReactionsDisplay, reactions } from './reactions.ts';
import { captionsTrack, type TranscriptsDisplay, transcriptBlock } from './transcripts.ts';

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

/** Where a web address may be: a dot before a host name's label, a scheme's `://`, localhost. */
const MAY_HOLD_ADDRESS = /\.[^\s.]|:\/\/|localhost/i;

/**
 * A message's text with its web addresses as links (linkifyjs finds them, `example.com` too),
 * marked as the writer's (`nofollow ugc`); everything else stays text, escaped by the `html` tag.
 */
export function linkified(text: string): Html {
  // Every web address linkifyjs finds (that a page links) has a dot before a character of its
  // name, a scheme's `://`, or is localhost: text without any (most messages) skips its scanner,
  // the page's costliest step.
  if (!MAY_HOLD_ADDRESS.test(text)) return html`${text}`;
  const parts: (string | Html)[] = [];
  let at = 0;
  for (const found of find(text, 'url')) {
    const href = webUrl(found.href);
    if (!href) continue;
    parts.push(text.slice(at, found.start), html`<a href="${href}" rel="nofollow ugc noopener">${found.value}</a>`);
    at = found.end;
  }
  parts.push(text.slice(at));
  return html`${parts}`;
}

/**
 * A message's words: as written, with their web addresses as links; or, posted through the API
 * with markup, its safe subset of HTML, sanitized again here (what is stored is never trusted).
 */
function messageText(m: PageMessageRecord): Html | string {
  if (m.text === '') return '';
  if (m.format === 'html') return html`<div class="text rich">${raw(safeMessageHtml(m.text))}</div>`;
  return html`<p class="text">${linkified(m.text)}</p>`;
}

/** Who wrote it: a name nobody verified says so (an anonymous reply's, an unconfirmed start's). */
const authorName = (m: PageMessageRecord): string =>
  m.author.anonymous ? (m.claimedName ? unverifiedName(m.claimedName) : ANONYMOUS) : m.author.name || ANONYMOUS;

/** When something happened: as the API says it, and as machines read it. */
export const time = (micros: bigint): Html =>
  html`<time datetime="${formatIsoTime(micros)}">${formatNiceTime(micros)}</time>`;

/** How a page names a recording of each kind. */
export const KIND_NAMES: Record<string, string> = {
  video: 'Video',
  screen: 'Screen recording',
  audio: 'Audio',
  text: 'Recording',
};

/**
 * A message's recording: played in place when this server keeps it (a player with its measured
 * length, and a download link that works without the player), else a link to where it is kept.
 */
function media(
  m: PageMessageRecord,
  accountKey: string,
  slug: string,
  beacon?: string,
  transcript?: KeptTranscript,
  transcripts?: TranscriptsDisplay,
): Html {
  const seconds = m.recordedDurationSeconds > 0 ? clockTime(m.recordedDurationSeconds) : '';
  const name = KIND_NAMES[m.messageType] ?? 'Recording';
  if (m.hostedMedia) {
    // With its conversation's slug, the key an unlisted conversation's recordings need.
    const query = new URLSearchParams({ c: slug });
    const src = `/media/${accountKey}/${m.id}?${query}`;
    const label = `${name}${seconds ? `, ${seconds}` : ''}`;
    // The still the recorder made of its first second, shown until it plays.
    const poster = m.poster ? html` poster="/media/${accountKey}/${m.id}/poster?${query}"` : '';
    // Its captions, once its transcript is made (the same access as the recording's).
    const complete = transcript?.status === 'complete' ? transcript : undefined;
    const track = complete ? captionsTrack(`/media/${accountKey}/${m.id}/captions.vtt?${query}`, complete) : '';
    const player =
      m.messageType === 'audio'
        ? html`<audio controls preload="metadata" src="${src}" aria-label="${label}">${track}</audio>`
        : html`<video controls preload="metadata" playsinline src="${src}"${poster} aria-label="${label}">${track}</video>`;
    // A player that reports its play (the receipt's beacon, site.js): where, after how long, its ticket.
    const play = beacon
      ? html` data-play="${playedUrl(slug, m.id)}" data-play-after="${playThreshold(m.recordedDurationSeconds)}" data-ticket="${beacon}"`
      : '';
    return html`<figure class="recording recording-${m.messageType}"${play}>${player}
<figcaption>${label} · <a href="${src}&amp;download=1" download>Download</a></figcaption></figure>${transcriptBlock(slug, m.id, transcript, transcripts)}`;
  }
  const url = webUrl(m.downloadMediaUrl);
  if (!url) return html``;
  return html`<p><a href="${url}" rel="nofollow noopener">Download the ${name.toLowerCase()}${seconds ? ` (${seconds})` : ''}</a></p>`;
}

/** Where a message's play is reported (POST, the beacon) and its receipt read (GET, a live update). */
export const playedUrl = (slug: string, id: number) => `/c/${slug}/messages/${id}/played`;

/** A message's receipt, as its author and the team see it: "Played by Pat and 2 visitors". */
export const receipt = (id: number, s: PlaySummary): Html =>
  html`<p class="played" id="played-${id}">${playedByText(s)}</p>`;

/** Who wrote a message: their name, and a badge with the account's name when they are on its team. */
const author = (m: PageMessageRecord, team: string): Html =>
  html`<span class="byline"><span class="author">${authorName(m)}</span>${
    m.authorTeamRole ? html` <span class="team-badge">${team} team</span>` : ''
  }</span>`;

/**
 * One message; `link` is where its time points (its anchor on the page, or the page itself);
 * `team` is the account's name, shown on its team members' messages.
 */
export function message(
  m: PageMessageRecord,
  display: {
    showAuthor: boolean;
    link: string;
    anchor: boolean;
    team: string;
    /** The account's key and the conversation's slug, which the address of its recordings carries. */
    accountKey: string;
    slug: string;
    newTab?: boolean | undefined;
    /** What the reader may do to it (hide, delete), as buttons under it. */
    actions?: Html | string | undefined;
    /** Say so when it replies in a thread (shown alone, away from its thread: an embed of it). */
    threadLabel?: boolean | undefined;
    /** Its player reports a play with this ticket (the receipt's beacon); none: it does not. */
    beacon?: string | undefined;
    /** Its receipt, for a reader who sees it. */
    receipt?: PlaySummary | undefined;
    /** Replies shown with it that comment at a moment of its recording: marked under its player. */
    moments?: readonly PageMessageRecord[] | undefined;
    /** Its reactions, as this reader meets them. */
    reactions?: Html | string | undefined;
    /** Its recording's transcript: captions on the player and the words under it, once complete. */
    transcript?: KeptTranscript | undefined;
    /** How transcripts are shown to this reader (the team's forms). */
    transcripts?: TranscriptsDisplay | undefined;
  },
): Html {
  const target = display.newTab ? html` target="_blank" rel="noopener"` : '';
  // An internal note (only the team is ever shown one) says so, plainly, before anything else.
  return html`<article class="message${m.internal ? ' internal' : ''}"${display.anchor ? html` id="message-${m.id}"` : ''}>
${m.internal ? html`<p class="internal-label">Internal note: only the team sees it</p>` : ''}${
  display.threadLabel && m.parentId !== null
    ? html`<p class="thread-label">In the thread of <a href="${display.newTab ? `${display.link.replace(/#.*$/, '')}#message-${m.parentId}` : `#message-${m.parentId}`}"${target}>an earlier message</a></p>`
    : ''
}<header class="message-head">${display.showAuthor ? author(m, display.team) : ''}<a href="${display.link}"${target}>${time(m.createdAt)}</a></header>
${m.atSeconds !== null && m.parentId !== null ? momentLine(m.atSeconds, m.parentId, display.newTab ? display.link.replace(/#.*$/, '') : '', target) : ''}${messageText(m)}
${media(m, display.accountKey, display.slug, display.beacon, display.transcript, display.transcripts)}${m.hostedMedia ? momentMarks(m, display.moments ?? []) : ''}${display.receipt ? receipt(m.id, display.receipt) : ''}${display.reactions ?? ''}${display.actions ?? ''}
</article>`;
}

/** A reply at a moment: "At 1:23 of the recording", a link that seeks its thread's player (site.js). */
const momentLine = (at: number, root: number, page: string, target: Html | string): Html =>
  html`<p class="moment">At <a href="${page}#message-${root}" data-seek="${at}" data-player="message-${root}"${target}>${clockTime(at)}</a> of the recording</p>`;

/**
 * Under a recording, the moments its shown replies speak of: links to each reply; with
 * JavaScript, marks along a timeline that seek the player (site.js places them).
 */
function momentMarks(m: PageMessageRecord, replies: readonly PageMessageRecord[]): Html | string {
  const marked = replies
    .filter((r) => r.atSeconds !== null && r.parentId === m.id)
    .sort((a, b) => (a.atSeconds ?? 0) - (b.atSeconds ?? 0));
  if (marked.length === 0) return '';
  return html`<p class="moments-label" id="moments-${m.id}">Replies at moments of this recording:</p><ol class="moments" aria-labelledby="moments-${m.id}" data-length="${m.recordedDurationSeconds}" data-player="message-${m.id}">${marked.map(
    (r) =>
      html`<li data-at="${r.atSeconds}"><a href="#message-${r.id}" data-seek="${r.atSeconds}" data-player="message-${m.id}" aria-label="${authorName(r)} at ${clockTime(r.atSeconds ?? 0)}">${clockTime(r.atSeconds ?? 0)}</a></li>`,
  )}</ol>`;
}

const members = (users: UserRecord[]): Html =>
  users.length === 0
    ? html`<p class="empty">No members.</p>`
    : html`<ul class="members">${users.map((u) => html`<li>${u.name}</li>`)}</ul>`;

const repliesText = (n: number) => (n === 1 ? '1 reply' : `${n} replies`);

/**
 * Under a message of the conversation: its thread's reply count (a link to the thread's page) and
 * its latest replies; a script adds the replies that arrive while the page is open.
 */
function threadPreview(
  rootId: number,
  thread: ThreadPreview | undefined,
  base: string,
  pageUrl: string,
  slug: string,
  display: ConversationDisplay,
): Html | string {
  if (!thread || thread.count === 0) return '';
  const target = display.newTab ? html` target="_blank" rel="noopener"` : '';
  const shown = thread.latest.length;
  return html`<div class="thread-preview" data-count="${thread.count}">
<p class="thread-count"><a href="${threadUrl(base, rootId)}"${target}>${repliesText(thread.count)}</a>${
    thread.count > shown ? `, the latest ${shown === 1 ? 'one' : shown} below` : ''
  }</p>
<ol class="messages thread-replies" aria-label="Latest replies in this thread">${thread.latest.map((r) =>
    messageItem(r, pageUrl, slug, display),
  )}</ol>
</div>`;
}

/** Where page `n` of a conversation's messages is; null: its latest messages. */
const pageHref = (base: string, n: number | null) => (n === null ? base : `${base}?page=${n}`);

/**
 * How a page of a long conversation sits among the others: which messages it shows, and links to
 * the earlier and later ones. `page` is null on the latest messages.
 */
function pager(
  c: ConversationPageRecord,
  base: string,
  page: number | null,
  target: Html | string,
  label: string,
): Html | string {
  if (c.messageCount <= PAGE_MESSAGES && page === null) return '';
  const pages = messagePages(c.messageCount);
  const first = c.start + 1;
  const last = c.start + c.messages.length;
  const earlier = c.start > 0 ? pageOf(c.start - 1) : null;
  const later = page !== null && page < pages ? page + 1 : null;
  const a = (href: string, label: string) => html`<li><a href="${href}"${target}>${label}</a></li>`;
  return html`<nav class="pager" aria-label="${label}">
<p>Messages ${first}–${last} of ${c.messageCount}${page === null ? ' (the latest)' : ` (page ${page} of ${pages})`}.</p>
<ul>${earlier !== null ? a(pageHref(base, earlier), 'Earlier messages') : ''}${later !== null ? a(pageHref(base, later), 'Later messages') : ''}${page !== null ? a(base, 'Latest messages') : ''}</ul>
</nav>`;
}

/**
 * Anchors for the messages before the latest page: a `message_url` of one of them lands here, on
 * a line (shown only when it is the target) that leads to the page that holds it.
 */
function earlierAnchors(c: ConversationPageRecord, base: string, target: Html | string): Html | string {
  if (c.earlierIds.length === 0) return '';
  const firstPosition = c.start - c.earlierIds.length;
  return html`<div class="earlier">${c.earlierIds.map(
    (id, i) =>
      html`<p class="earlier-anchor" id="message-${id}"><a href="${pageHref(base, pageOf(firstPosition + i))}#message-${id}"${target}>This message is on an earlier page: show it</a></p>`,
  )}</div>`;
}

/** How a conversation's messages are shown: on its page, or in its embed (`newTab`). */
export interface ConversationDisplay {
  team: string;
  accountKey: string;
  newTab?: boolean;
  page?: number | null;
  /** The buttons under each message for this reader (none in embeds). */
  actions?: (m: PageMessageRecord) => Html | string;
  /** Each message of the conversation offers "Reply in thread" (its thread's page, or inline with JavaScript). */
  threads?: boolean;
  /**
   * Played receipts: the ticket each player reports its play with, for the messages whose play
   * by this reader is a receipt (none for the message's own side), and the receipts this reader sees.
   */
  played?: {
    ticket: (m: PageMessageRecord, slug: string) => string | undefined;
    receipts: ReadonlyMap<number, PlaySummary>;
  };
  /** Reactions under each message (none in embeds). */
  reactions?: ReactionsDisplay;
  /** The transcripts of the messages' recordings, and the team's forms. */
  transcripts?: TranscriptsDisplay;
}

/** One message as an item of its conversation's list: on the page, in the embed, or alone (a live update). */
export function messageItem(
  m: PageMessageRecord,
  pageUrl: string,
  slug: string,
  display: ConversationDisplay,
  /** A message of the conversation's page: its thread, shown under it. */
  thread?: { preview: ThreadPreview | undefined; base: string },
  /** The replies shown with it (a thread's page): those at a moment of its recording are marked. */
  replies?: readonly PageMessageRecord[],
): Html {
  const page = display.page ?? null;
  // A reply says which thread it is in: a live update puts it there.
  return html`<li${m.parentId !== null ? html` data-thread="${m.parentId}"` : ''}>${message(m, {
    showAuthor: true,
    // On the page itself the anchor is enough; an embed links to the page.
    link: display.newTab ? `${pageHref(pageUrl, page)}#message-${m.id}` : `#message-${m.id}`,
    anchor: true,
    team: display.team,
    accountKey: display.accountKey,
    slug,
    newTab: display.newTab,
    actions: display.actions?.(m),
    beacon: display.played?.ticket(m, slug),
    receipt: display.played?.receipts.get(m.id),
    transcript: display.transcripts?.kept.get(m.id),
    transcripts: display.transcripts,
    moments: replies ?? thread?.preview?.latest,
    reactions: display.reactions
      ? reactions(slug, m.id, display.reactions.shown.get(m.id) ?? [], display.reactions.csrf)
      : undefined,
  })}${thread ? threadPreview(m.id, thread.preview, thread.base, pageUrl, slug, display) : ''}${
    display.threads && m.parentId === null
      ? html`<p class="thread-link"><a href="${threadUrl(`/c/${slug}`, m.id)}">Reply in thread</a></p>`
      : ''
  }</li>`;
}

/**
 * Anchors for the thread replies the page does not show: a `message_url` of one lands on a line
 * (shown only when it is the target) that leads to its thread's page.
 */
function replyAnchors(c: ConversationPageRecord, base: string, target: Html | string): Html | string {
  if (c.replyIds.length === 0) return '';
  return html`<div class="earlier">${c.replyIds.map(
    (id) =>
      html`<p class="earlier-anchor" id="message-${id}"><a href="${threadUrl(base, id)}#message-${id}"${target}>This message is a reply in a thread: show it</a></p>`,
  )}</div>`;
}

/**
 * A conversation: its title, tags, members and one page of its messages, oldest first. `page` is
 * the numbered page shown, or null for the latest messages; `team` is the account's name. `live`
 * (on the latest messages) is where a script follows it: its event stream and its messages.
 */
export function conversation(
  c: ConversationPageRecord,
  pageUrl: string,
  display: ConversationDisplay & { live?: { events: string; messages: string } | undefined },
): Html {
  const page = display.page ?? null;
  // On the page itself links stay on the site's paths; an embed opens the page in a new tab.
  const base = display.newTab ? pageUrl : `/c/${c.slug}`;
  const target = display.newTab ? html` target="_blank" rel="noopener"` : '';
  const live = page === null ? display.live : undefined;
  return html`<article class="conversation"${live ? html` data-events="${live.events}" data-messages="${live.messages}"` : ''}>
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
${earlierAnchors(c, base, target)}${replyAnchors(c, base, target)}${pager(c, base, page, target, 'Earlier and later messages')}
${
  c.messages.length === 0
    ? html`<p class="empty" id="no-messages">No messages yet.</p>`
    : html`<ol class="messages" aria-labelledby="messages-heading" start="${c.start + 1}">${c.messages.map((m) =>
        messageItem(m, pageUrl, c.slug, display, { preview: c.threads.get(m.id), base }),
      )}</ol>`
}
${c.messages.length > 0 ? pager(c, base, page, target, 'Earlier and later messages, after the list') : ''}
</article>`;
}

/** The first words of a conversation, for link previews. */
export function excerpt(c: ConversationPageRecord, max = 200): string {
  const first = c.firstText?.trim().replace(/\s+/g, ' ');
  if (!first) return `A conversation with ${c.messageCount} messages.`;
  const chars = Array.from(first);
  return chars.length <= max ? first : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * A thread's own page (`/c/<slug>/m/<id>`): its first message and its replies, oldest first, under
 * a link back to the conversation; the reply form (in the thread) follows.
 */
export function threadView(
  slug: string,
  messages: PageMessageRecord[],
  pageUrl: string,
  display: ConversationDisplay,
): Html {
  const [first] = messages;
  const replies = messages.length - 1;
  return html`<p class="meta"><a href="/c/${slug}#message-${first?.id ?? ''}">Back to the conversation</a></p>
<article class="conversation thread">
<h1>A thread</h1>
<p class="meta">${replies === 0 ? 'No replies yet.' : replies === 1 ? '1 reply.' : `${replies} replies.`}</p>
<ol class="messages" aria-label="The thread's messages">${messages.map((m) =>
    messageItem(m, pageUrl, slug, { ...display, threads: false }, undefined, m === first ? messages : undefined),
  )}</ol>
</article>`;
}
