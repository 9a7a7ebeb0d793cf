import type { ConversationPageRecord, UserRecord } from '@convo/domain';
import { html } from 'hono/html';
import type { Html } from './layout.ts';

/** What every form of the site carries: the CSRF token bound to the visitor's cookie. */
const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

export interface ReplyDraft {
  text?: string;
  name?: string;
  email?: string;
  problem?: string;
}

/** The reply form under a conversation's messages: a plain form that posts to the page itself. */
export function replyForm(
  c: ConversationPageRecord,
  o: { csrf: string; submitKey: string; signedIn: UserRecord | null; draft?: ReplyDraft | undefined },
): Html {
  const d = o.draft ?? {};
  const identity = o.signedIn
    ? html`<p class="note">Posting as ${o.signedIn.name}.</p>`
    : c.allowAnonymousMessages
      ? html`<p class="note">You post anonymously. <a href="/sign-in?return=/c/${c.slug}">Sign in</a> to post under your name.</p>`
      : html`<p class="note">Give your name and e-mail address, or <a href="/sign-in?return=/c/${c.slug}">sign in</a>. Your e-mail address is never shown on this site.</p>
<p><label for="reply-name">Name</label><input id="reply-name" name="name" autocomplete="name" maxlength="255" required value="${d.name ?? ''}"></p>
<p><label for="reply-email">E-mail</label><input id="reply-email" name="email" type="email" autocomplete="email" maxlength="320" required value="${d.email ?? ''}"></p>`;
  return html`<section aria-labelledby="reply-heading">
<h2 id="reply-heading">Reply</h2>
${d.problem ? html`<p class="problem" role="alert">${d.problem}</p>` : ''}
<form method="post" action="/c/${c.slug}" class="reply">
${csrfField(o.csrf)}
<input type="hidden" name="submit" value="${o.submitKey}">
${identity}
<p><label for="reply-text">Your reply</label><textarea id="reply-text" name="text" rows="5" maxlength="10000" required>${d.text ?? ''}</textarea></p>
<p><button type="submit">Post reply</button></p>
</form>
</section>`;
}

/** Who is signed in, with a way out; or a way in. */
export function signedInBar(user: UserRecord | null, csrf: string, back: string): Html {
  return user
    ? html`<form method="post" action="/sign-out" class="session">
${csrfField(csrf)}<input type="hidden" name="return" value="${back}">
<span>Signed in as ${user.name}</span> <button type="submit">Sign out</button>
</form>`
    : html`<p class="session"><a href="/sign-in?return=${back}">Sign in</a></p>`;
}

export function signInForm(o: { csrf: string; back: string; email?: string; problem?: string }): Html {
  return html`<h1>Sign in</h1>
<p>Enter your e-mail address. If it belongs to someone here, we send a link that signs you in.</p>
${o.problem ? html`<p class="problem" role="alert">${o.problem}</p>` : ''}
<form method="post" action="/sign-in">
${csrfField(o.csrf)}<input type="hidden" name="return" value="${o.back}">
<p><label for="sign-in-email">E-mail</label><input id="sign-in-email" name="email" type="email" autocomplete="email" maxlength="320" required value="${o.email ?? ''}"></p>
<p><button type="submit">Send me a link</button></p>
</form>`;
}

/** The same answer whether or not the address is a user's. */
export const checkEmail = (o: { reply: boolean }): Html => html`<h1>Check your e-mail</h1>
<p>${
  o.reply
    ? 'That address belongs to someone here, so your reply waits for them: we sent a sign-in link to it. Open it within 15 minutes and the reply is posted.'
    : 'If that address belongs to someone here, we sent it a sign-in link. It works once, for 15 minutes.'
}</p>`;

export const linkUnusable = (): Html => html`<h1>This link does not work any more</h1>
<p>Sign-in links work once, for 15 minutes. <a href="/sign-in">Ask for a new one</a>.</p>`;

export const formRefused = (message: string): Html => html`<h1>That did not work</h1>
<p class="problem" role="alert">${message}</p>
<p>Go back, reload the page and try again.</p>`;

export const tooMany = (seconds: number): Html => html`<h1>Too many attempts</h1>
<p>Please wait ${seconds} seconds and try again.</p>`;
