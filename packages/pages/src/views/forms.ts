import {
  type ConversationPageRecord,
  clockTime,
  durationLimitText,
  type MediaLimits,
  type OpenedLink,
  type UserRecord,
} from '@convo/domain';
import { html } from 'hono/html';
import { UPLOADER } from '../assets/index.ts';
import type { Html } from './layout.ts';

/** What every form of the site carries: the CSRF token bound to the visitor's cookie. */
export const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

export interface ReplyDraft {
  text?: string;
  name?: string;
  email?: string;
  problem?: string;
  /** The message template the reply starts from: its id, name and recording (in words), if any. */
  template?: { id: number; name: string; recording: string | null } | undefined;
  /** The "Internal note" box was ticked. */
  internal?: boolean | undefined;
  /** The moment typed into "At" (a reply in a recording's thread). */
  at?: string | undefined;
}

/**
 * The team's "Use a template" picker above the reply form: a plain GET form, so the page comes
 * back with the template's text in the reply box to change before posting (JavaScript or not).
 */
function templatePicker(slug: string, templates: readonly { id: number; name: string }[], chosen: number | null): Html {
  return html`<form method="get" action="/c/${slug}#reply" class="template-picker">
<p><label for="reply-template">Use a template</label><select id="reply-template" name="template">${templates.map(
    (t) => html`<option value="${t.id}"${t.id === chosen ? html` selected` : ''}>${t.name}</option>`,
  )}</select> <button type="submit" class="secondary">Insert</button></p>
</form>`;
}

/** The reply form under a conversation's messages: a plain form that posts to the page itself. */
export function replyForm(
  c: Pick<ConversationPageRecord, 'slug' | 'allowAnonymousMessages'>,
  state: {
    csrf: string;
    submitKey: string;
    signedIn: UserRecord | null;
    draft?: ReplyDraft | undefined;
    limits: MediaLimits;
    /** The team's message templates (anyone else: none, and no picker). */
    templates?: readonly { id: number; name: string }[] | undefined;
    /** The reader is on the team: the form offers an internal note. */
    notes?: boolean | undefined;
    /** The thread it replies in (the thread's page): its first message's id. */
    parentId?: number | undefined;
    /** The thread's first message is a recording of this length: the form offers a moment of it ("At"). */
    moment?: { seconds: number } | undefined;
  },
): Html {
  const d = state.draft ?? {};
  const templates = state.templates ?? [];
  const fromTemplate = d.template
    ? html`<input type="hidden" name="template" value="${d.template.id}">
<p class="note template-note">From the template “${d.template.name}”${d.template.recording ? `, with its recording (${d.template.recording})` : ''}: change the text as you like before you post it. <a href="/c/${c.slug}#reply">Write without it</a></p>`
    : '';
  const identity = state.signedIn
    ? html`<p class="note">Posting as ${state.signedIn.name}.</p>`
    : c.allowAnonymousMessages
      ? html`<p class="note">You post anonymously, or under a name you give here (shown as not verified). <a href="/sign-in?return=/c/${c.slug}">Sign in</a> to post under your own.</p>
<p><label for="reply-name">Your name (optional)</label><input id="reply-name" name="name" autocomplete="name" maxlength="255" value="${d.name ?? ''}"></p>`
      : html`<p class="note">Give your name and e-mail address, or <a href="/sign-in?return=/c/${c.slug}">sign in</a>. Your e-mail address is never shown on this site.</p>
<p><label for="reply-name">Name</label><input id="reply-name" name="name" autocomplete="name" maxlength="255" required value="${d.name ?? ''}"></p>
<p><label for="reply-email">E-mail</label><input id="reply-email" name="email" type="email" autocomplete="email" maxlength="320" required value="${d.email ?? ''}"></p>`;
  // The action ends in #reply: a refused reply's page opens at the form and its alert, not at the top.
  return html`<section id="reply" aria-labelledby="reply-heading">
<h2 id="reply-heading">${state.parentId === undefined ? 'Reply' : 'Reply in this thread'}</h2>
${d.problem ? html`<p class="problem" role="alert">${d.problem}</p>` : ''}
${templates.length > 0 ? templatePicker(c.slug, templates, d.template?.id ?? null) : ''}
<form method="post" action="/c/${c.slug}#reply" class="reply" enctype="multipart/form-data" data-max-seconds="${state.limits.maxSeconds}" data-conversation="${c.slug}" data-uploader="${UPLOADER.path}">
${csrfField(state.csrf)}
<input type="hidden" name="submit" value="${state.submitKey}">
${state.parentId === undefined ? '' : html`<input type="hidden" name="parent" value="${state.parentId}">`}
${identity}
${fromTemplate}
<p><label for="reply-text">Your reply</label><textarea id="reply-text" name="text" rows="5" maxlength="10000" aria-describedby="reply-text-note">${d.text ?? ''}</textarea></p>
<p class="note" id="reply-text-note">Write a reply, send a recording, or both.</p>
${state.moment ? momentField(state.parentId, state.moment.seconds, d.at) : ''}${recordingInput('reply-media', state.limits)}
${
  state.notes
    ? html`<p class="check"><input type="checkbox" id="reply-internal" name="internal" value="true"${d.internal ? html` checked` : ''} aria-describedby="reply-internal-note"><label for="reply-internal">Internal note</label></p>
<p class="note" id="reply-internal-note">Only the team sees an internal note: never the people in the conversation, its embed or their mail.</p>`
    : ''
}
<p><button type="submit">Post reply</button></p>
</form>
</section>`;
}

/**
 * A reply in a recording's thread: the moment of the recording it speaks of (optional, m:ss). With
 * JavaScript, a button takes the player's time (site.js).
 */
const momentField = (root: number | undefined, seconds: number, typed: string | undefined): Html =>
  html`<p class="moment-field"><label for="reply-at">At a moment of the recording (optional, minutes:seconds${seconds > 0 ? `, up to ${clockTime(seconds)}` : ''})</label>
<input id="reply-at" name="at" inputmode="numeric" maxlength="9" pattern="[0-9]{1,5}(:[0-9]{1,2}){0,2}" placeholder="1:23" value="${typed ?? ''}" aria-describedby="reply-at-note">
<button type="button" class="secondary" data-moment-now="message-${root ?? ''}" hidden>Use the player's time</button></p>
<p class="note" id="reply-at-note">Your reply then says “At 1:23 of the recording”, and the recording’s timeline marks it.</p>`;

const MIB = 1024 * 1024;

/** A form's recording: a file input (the recorder, with JavaScript, records into it). */
export const recordingInput = (id: string, limits: MediaLimits): Html =>
  html`<p class="recording-file"><label for="${id}">Recording (video or audio, up to ${durationLimitText(limits.maxSeconds)} and ${Math.floor(limits.maxBytes / MIB)} MB)</label>
<input id="${id}" name="media" type="file" accept="video/*,audio/*" capture="user"></p>`;

export interface MembersDraft {
  email?: string;
  name?: string;
  problem?: string;
}

/**
 * What the account's team sees under a conversation's members: each member's address with a
 * button that takes them out, and a form that adds someone by e-mail (who is then told by mail).
 */
export function membersForm(
  c: ConversationPageRecord,
  state: { csrf: string; draft?: MembersDraft | undefined },
): Html {
  const d = state.draft ?? {};
  const action = `/c/${c.slug}/members#manage-members`;
  return html`<section id="manage-members" aria-labelledby="manage-members-heading" class="manage">
<h2 id="manage-members-heading">Manage members</h2>
${d.problem ? html`<p class="problem" role="alert">${d.problem}</p>` : ''}
${
  c.users.length > 0
    ? html`<ul class="member-admin">${c.users.map(
        (u) => html`<li><form method="post" action="${action}">
${csrfField(state.csrf)}<input type="hidden" name="remove" value="${u.email}">
<span>${u.name} &lt;${u.email}&gt;</span> <button type="submit" class="secondary" aria-label="Remove ${u.name}">Remove</button>
</form></li>`,
      )}</ul>`
    : ''
}
<form method="post" action="${action}" class="add-member">
${csrfField(state.csrf)}
<p><label for="member-email">E-mail of the person to add</label><input id="member-email" name="email" type="email" autocomplete="off" maxlength="320" required value="${d.email ?? ''}"></p>
<p><label for="member-name">Their name (if they are new here)</label><input id="member-name" name="name" autocomplete="off" maxlength="255" value="${d.name ?? ''}"></p>
<p><button type="submit">Add and tell them by e-mail</button></p>
</form>
<form method="post" action="${action}" class="end-passes">
${csrfField(state.csrf)}<input type="hidden" name="end_passes" value="1">
<p>A visitor who started this conversation on an intake page reads it on that device without signing in, for 30 days.</p>
<p><button type="submit" class="secondary">End the access of the devices that started it</button></p>
</form>
</section>`;
}

/** A conversation's settings form as it was sent, when it is refused. */
export interface SettingsDraft {
  title: string;
  visibility?: { anyoneCanPost: boolean; allowAnonymousMessages: boolean; allowSearchEngines: boolean } | undefined;
  problem: string;
}

/**
 * The team's form for a conversation's title (and, for owners and admins, who may see and post in
 * it), folded away under the reply form: open when it was just refused.
 */
export function settingsForm(
  c: ConversationPageRecord,
  state: { csrf: string; visibility: boolean; draft?: SettingsDraft | undefined },
): Html {
  const d = state.draft;
  const now = d?.visibility ?? c;
  const box = (name: string, id: string, on: boolean, label: string) =>
    html`<p class="check"><input type="checkbox" id="${id}" name="${name}" value="true"${on ? html` checked` : ''}> <label for="${id}">${label}</label></p>`;
  return html`<details id="conversation-settings" class="manage"${d ? html` open` : ''}>
<summary>Conversation settings</summary>
${d ? html`<p class="problem" role="alert">${d.problem}</p>` : ''}
<form method="post" action="/c/${c.slug}/settings#conversation-settings">
${csrfField(state.csrf)}
<p><label for="conversation-title">Title</label><input id="conversation-title" name="title" maxlength="255" required value="${d?.title ?? c.title}"></p>
${
  state.visibility
    ? html`<fieldset><legend>Who may see and post</legend><input type="hidden" name="visibility" value="1">
${box('anyone_can_post', 'conversation-public', now.anyoneCanPost, 'Public: anyone with its address reads it and replies')}
${box('allow_anonymous_messages', 'conversation-anonymous', now.allowAnonymousMessages, 'Replies without a name and e-mail address')}
${box('allow_search_engines', 'conversation-search', now.allowSearchEngines, 'Search engines may list it, while it is public')}
</fieldset>`
    : ''
}
<p><button type="submit">Save</button></p>
</form>
</details>`;
}

/** Who is signed in, with a way out; or a way in. */
export function signedInBar(user: UserRecord | null, csrf: string, back: string): Html {
  return user
    ? html`<form method="post" action="/sign-out" class="session">
${csrfField(csrf)}<input type="hidden" name="return" value="${back}">
<span>Signed in as ${user.name}</span> <a href="/settings">Settings</a> <button type="submit">Sign out</button>
</form>`
    : html`<p class="session"><a href="/sign-in?return=${back}">Sign in</a></p>`;
}

export function signInForm(fields: { csrf: string; back: string; email?: string; problem?: string }): Html {
  return html`<h1>Sign in</h1>
<p>Enter your e-mail address and we send it a link that signs you in.</p>
${fields.problem ? html`<p class="problem" role="alert">${fields.problem}</p>` : ''}
<form method="post" action="/sign-in">
${csrfField(fields.csrf)}<input type="hidden" name="return" value="${fields.back}">
<p><label for="sign-in-email">E-mail</label><input id="sign-in-email" name="email" type="email" autocomplete="email" maxlength="320" required value="${fields.email ?? ''}"></p>
<p><button type="submit">Send me a link</button></p>
</form>`;
}

/** What a pending recording is called on the page that confirms it. */
const RECORDING_WORDS: Record<string, string> = {
  video: 'a video recording',
  screen: 'a screen recording',
  audio: 'an audio recording',
};

/** `seconds` as people say a recording's length: "42 seconds", "3:05 minutes". */
const durationText = (seconds: number): string =>
  seconds < 60
    ? `${seconds} second${seconds === 1 ? '' : 's'}`
    : `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')} minutes`;

/**
 * The same answer whoever owns the address: the link says whose it is to the person who opens it.
 * `back`: where the visitor came from, to return to meanwhile.
 */
export const checkEmail = (what: { reply: boolean; back?: string | undefined }): Html => html`<h1>Check your e-mail</h1>
<p>${
  what.reply
    ? 'We sent a link to that address. Open it within 15 minutes and confirm, and your reply is posted under your name.'
    : 'We sent a link to that address. It works once, for 15 minutes.'
}</p>
<p><a href="${what.back ?? '/'}">${what.back ? 'Back to the conversation' : 'Back to the home page'}</a></p>`;

/**
 * The page behind a mailed link: who it signs in, the reply it would post, and the one button
 * that does it (a POST). A new person gives or checks their name here.
 */
export function confirmSignIn(shown: {
  csrf: string;
  action: string;
  link: OpenedLink;
  problem?: string | undefined;
}): Html {
  const { link } = shown;
  const who = link.user
    ? html`<p>This signs you in as <strong>${link.user.name}</strong> (${link.email}).</p>`
    : html`<p>Nobody here uses ${link.email} yet: confirming makes you a member of this site under the name below.</p>`;
  const recording = link.pending?.media;
  const reply = link.pending
    ? html`<p>Your reply, to be posted on <a href="${link.returnPath}">${link.returnPath}</a>:</p>
${link.pending.text ? html`<blockquote class="pending">${link.pending.text}</blockquote>` : ''}
${recording ? html`<p class="note">With ${RECORDING_WORDS[recording.kind] ?? 'a recording'} of ${durationText(recording.seconds)}.</p>` : ''}`
    : link.claim
      ? html`<p>Confirming puts your name on the message that started <a href="${link.returnPath}">this conversation</a> and makes you one of its members.</p>`
      : '';
  const [heading, button] = link.pending
    ? ['Confirm your reply', 'Post my reply and sign in']
    : link.claim
      ? ['Confirm your conversation', 'Confirm and sign in']
      : ['Sign in', 'Sign in'];
  return html`<h1>${heading}</h1>
${shown.problem ? html`<p class="problem" role="alert">${shown.problem}</p>` : ''}
${who}${reply}
<form method="post" action="${shown.action}">
${csrfField(shown.csrf)}
${
  link.user
    ? ''
    : html`<p><label for="confirm-name">Your name</label><input id="confirm-name" name="name" autocomplete="name" maxlength="255" required value="${link.name ?? ''}"></p>`
}
<p><button type="submit">${button}</button></p>
</form>
<p class="note">Did not ask for this? Close this page: nothing is posted and nobody is signed in.</p>`;
}

export const linkUnusable = (): Html => html`<h1>This link does not work any more</h1>
<p>Sign-in links work once, for 15 minutes. <a href="/sign-in">Ask for a new one</a>.</p>`;

export const formRefused = (message: string): Html => html`<h1>That did not work</h1>
<p class="problem" role="alert">${message}</p>
<p>Go back, reload the page and try again.</p>`;

export const tooMany = (seconds: number): Html => html`<h1>Too many attempts</h1>
<p>Please wait ${seconds} seconds and try again.</p>`;
