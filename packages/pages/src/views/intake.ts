import { clockTime, type MediaLimits, type PublicIntakePage, type UserRecord } from '@convo/domain';
import { html } from 'hono/html';
import { KIND_NAMES, linkified } from './conversation.ts';
import { recordingInput } from './forms.ts';
import type { Html } from './layout.ts';

export interface IntakeDraft {
  text?: string;
  name?: string;
  email?: string;
  problem?: string;
}

/** The welcome text: paragraphs at blank lines, web addresses as links. */
const welcome = (text: string): Html | string =>
  text.trim() === ''
    ? ''
    : html`<div class="welcome">${text
        .trim()
        .split(/\n\s*\n/)
        .map((p) => html`<p>${linkified(p.trim())}</p>`)}</div>`;

/** The page's welcome recording, played in place (the same player as a message's). */
function welcomeRecording(p: PublicIntakePage, accountKey: string): Html | string {
  const w = p.welcomeRecording;
  if (!w) return '';
  const src = `/media/${accountKey}/welcome/${p.key}`;
  const label = `Welcome ${(KIND_NAMES[w.kind] ?? 'recording').toLowerCase()}${w.seconds > 0 ? `, ${clockTime(w.seconds)}` : ''}`;
  const player =
    w.kind === 'audio'
      ? html`<audio controls preload="metadata" src="${src}" aria-label="${label}"></audio>`
      : html`<video controls preload="metadata" playsinline src="${src}" aria-label="${label}"></video>`;
  return html`<figure class="recording recording-${w.kind}">${player}<figcaption>${label}</figcaption></figure>`;
}

/**
 * An intake page: its title and welcome above the form that starts a conversation with the team
 * (a message as text and/or a recording, and who the visitor is unless the page allows anonymous
 * starts). A plain form that posts to the page itself; the recorder enhances it with JavaScript.
 */
export function intakePage(
  p: PublicIntakePage,
  state: {
    accountName: string;
    /** The account's key, which the address of the welcome recording carries. */
    accountKey: string;
    action: string;
    /** The CSRF token, or the embed's form token. */
    token: string;
    submitKey: string;
    signedIn: UserRecord | null;
    /** The viewer is on the team: the page is shown as visitors see it, without a form. */
    team: boolean;
    draft?: IntakeDraft | undefined;
    limits: MediaLimits;
  },
): Html {
  const d = state.draft ?? {};
  const title = p.title || state.accountName;
  const identity = state.signedIn
    ? html`<p class="note">You start it as ${state.signedIn.name}.</p>`
    : html`<p class="note">${
        p.allowAnonymous
          ? `Give your name and e-mail address to hear back when ${state.accountName} answers, or leave both out to start anonymously.`
          : `Give your name and e-mail address: we mail you a link to this conversation, and write when ${state.accountName} answers. Your address is never shown on this site.`
      }</p>
<p><label for="intake-name">Name</label><input id="intake-name" name="name" autocomplete="name" maxlength="255"${p.allowAnonymous ? '' : html` required`} value="${d.name ?? ''}"></p>
<p><label for="intake-email">E-mail</label><input id="intake-email" name="email" type="email" autocomplete="email" maxlength="320"${p.allowAnonymous ? '' : html` required`} value="${d.email ?? ''}"></p>`;
  const form = state.team
    ? html`<p class="note">You are on the team of ${state.accountName}: this is the page as visitors see it. Conversations are started here by them.</p>`
    : html`${d.problem ? html`<p class="problem" role="alert">${d.problem}</p>` : ''}
<form method="post" action="${state.action}#start" class="reply intake" enctype="multipart/form-data" data-max-seconds="${state.limits.maxSeconds}">
<input type="hidden" name="csrf" value="${state.token}">
<input type="hidden" name="submit" value="${state.submitKey}">
${identity}
<p><label for="intake-text">Your message</label><textarea id="intake-text" name="text" rows="6" maxlength="10000" aria-describedby="intake-text-note">${d.text ?? ''}</textarea></p>
<p class="note" id="intake-text-note">Write a message, send a recording, or both.</p>
${recordingInput('intake-media', state.limits)}
<p><button type="submit">Start the conversation</button></p>
</form>`;
  return html`<h1>${title}</h1>
${welcome(p.welcomeText)}${welcomeRecording(p, state.accountKey)}
<section id="start" aria-labelledby="start-heading">
<h2 id="start-heading">Start a conversation with ${state.accountName}</h2>
${form}
</section>`;
}
