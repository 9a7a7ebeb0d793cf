import { html } from 'hono/html';
import { document } from './layout.ts';

/**
 * A mail's HTML part: its plain text, escaped by the `html` tag (nothing a person wrote becomes
 * markup), with its line breaks kept.
 */
export const mailHtml = (text: string): string =>
  String(html`<!doctype html>
<html><body><div style="white-space: pre-wrap; font-family: sans-serif">${text}</div></body></html>
`);

/** A mail the demo did not send (no SMTP_URL), as its page lists it. */
export interface UnsentMail {
  to: string;
  subject: string;
  text: string;
  at: Date;
}

const URL_IN_TEXT = /(https?:\/\/[^\s<>"]+)/;

/** A mail's text with its addresses as links (everything else escaped, line breaks kept). */
const linked = (text: string) =>
  text.split(URL_IN_TEXT).map((part, i) => (i % 2 === 1 ? html`<a href="${part}">${part}</a>` : html`${part}`));

/**
 * `/_demo/mail` under `npm run demo`: the mail the demo would have sent, newest first, so a
 * sign-in link can be opened from a browser. The demo alone serves it; `npm start` never does.
 */
export const demoMailPage = (mails: readonly UnsentMail[]): string =>
  String(
    document(
      { title: 'Mail the demo did not send', noindex: true },
      html`<main id="content">
<h1>Mail the demo did not send</h1>
<p>The demo has no mail server (<code>SMTP_URL</code> is not set), so each mail is printed where
<code>npm run demo</code> runs and listed here, newest first. Open a sign-in link from here to sign
in. This page exists only in the demo.</p>
${
  mails.length === 0
    ? html`<p>No mail yet. Sign in, or reply with a name and e-mail address, and the mail appears here.</p>`
    : mails.map(
        (m, i) => html`<article class="demo-mail" aria-labelledby="mail-${i}">
<h2 id="mail-${i}">${m.subject}</h2>
<p>To ${m.to}, <time datetime="${m.at.toISOString()}">${m.at.toISOString().replace('T', ' ').slice(0, 19)} UTC</time></p>
<div class="demo-mail-text">${linked(m.text)}</div>
</article>`,
      )
}
</main>`,
    ),
  );
