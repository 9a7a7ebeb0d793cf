import {
  conversationUrl,
  type DigestMessage,
  type DueDigest,
  formatNiceTime,
  type MailReply,
  mailByline,
  mailExcerpt,
  mailPlayLine,
  mailReactionLine,
  mailRecordingName,
  messageReadUrl,
  type NotificationLinks,
  notificationHeading,
  playExcerpt,
  REPLY_ABOVE_MARKER,
} from '@convo/domain';
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

/**
 * A notification's HTML part, beside its text (notificationMail): who wrote, when, their words
 * (escaped), a recording's poster linked to the message where the conversation is public (a mail
 * client fetches it without signing in; a private one's is never in a mail), a button to answer,
 * and the ways to stop. Inline styles only: mail clients drop style sheets.
 */
export function notificationHtml(d: DueDigest, links: NotificationLinks, reply?: MailReply): string {
  const team = d.account.name;
  const url = conversationUrl(d.account, d.conversation.slug);
  const query = new URLSearchParams({ c: d.conversation.slug });
  const left = d.total - d.messages.length;
  const message = (m: DigestMessage) => {
    const link = messageReadUrl(url, m);
    const still =
      d.conversation.anyoneCanPost && m.poster && m.messageType !== 'audio'
        ? html`<p style="margin:0 0 6px"><a href="${link}"><img src="${d.account.host}/media/${d.account.key}/${m.id}/poster?${query}" alt="Play ${mailRecordingName(m.messageType)} on the page" width="320" style="max-width:100%;border-radius:6px"></a></p>`
        : '';
    return html`<div style="margin:0 0 16px;padding:12px;border-left:3px solid #0b57b8;background:#f5f7fa">
<p style="margin:0 0 6px;color:#4a5361"><strong style="color:#1f2733">${mailByline(m, team)}</strong>, ${formatNiceTime(m.createdAt)}</p>
${m.messageType === 'text' ? '' : html`<p style="margin:0 0 6px">(${mailRecordingName(m.messageType)})</p>`}${still}
${m.text.trim() === '' ? '' : html`<p style="margin:0 0 6px;white-space:pre-wrap">${mailExcerpt(m.text)}</p>`}
<p style="margin:0"><a href="${link}">Open it on the page</a></p>
</div>`;
  };
  const play = (p: DueDigest['plays'][number]) =>
    html`<p style="margin:0 0 10px"><a href="${messageReadUrl(url, { id: p.messageId, parentId: p.parentId })}">${mailPlayLine(p)}</a>, ${formatNiceTime(p.playedAt)}${p.text.trim() === '' ? '' : html`: <em>${playExcerpt(p.text)}</em>`}</p>`;
  const playsLeft = d.totalPlays - d.plays.length;
  const reaction = (r: DueDigest['reactions'][number]) =>
    html`<p style="margin:0 0 10px"><a href="${messageReadUrl(url, { id: r.messageId, parentId: r.parentId })}">${mailReactionLine(r)}</a>, ${formatNiceTime(r.createdAt)}${r.text.trim() === '' ? '' : html`: <em>${playExcerpt(r.text)}</em>`}</p>`;
  const reactionsLeft = d.totalReactions - d.reactions.length;
  return String(html`<!doctype html>
<html><body style="font-family:sans-serif;color:#1f2733;max-width:600px">
${reply ? html`<p style="font-size:12px;color:#4a5361">${REPLY_ABOVE_MARKER}</p>` : ''}
<p>${notificationHeading(d).lead}</p>
${d.messages.map(message)}
${left > 0 ? html`<p>…and ${left} more on the page.</p>` : ''}
${d.plays.length > 0 && d.total > 0 ? html`<p><strong>Played since:</strong></p>` : ''}${d.plays.map(play)}
${playsLeft > 0 ? html`<p>…and ${playsLeft} more plays.</p>` : ''}
${d.reactions.length > 0 && d.total + d.totalPlays > 0 ? html`<p><strong>Reactions since:</strong></p>` : ''}${d.reactions.map(reaction)}
${reactionsLeft > 0 ? html`<p>…and ${reactionsLeft} more reactions.</p>` : ''}
<p><a href="${url}#reply" style="display:inline-block;background:#0b57b8;color:#ffffff;padding:10px 16px;border-radius:6px;text-decoration:none">Answer on the page</a>${reply ? ' or answer this mail' : ''}</p>
<hr style="border:0;border-top:1px solid #d8dde3">
<p style="font-size:13px;color:#4a5361">You get this as a member or follower of this conversation on ${team}.<br>
<a href="${links.muteUrl}">No more mail about this conversation</a> · <a href="${links.muteAllUrl}">No more mail from ${team} at all</a> · <a href="${links.settingsUrl}">Your mail settings</a>${
    d.totalPlays > 0
      ? html`<br><a href="${links.mutePlaysUrl}">No more play notices about this conversation</a> · <a href="${links.mutePlaysAllUrl}">No more play notices at all</a>`
      : ''
  }</p>
</body></html>
`);
}

/** A mail the demo did not send (no SMTP_URL), as its page lists it. */
export interface UnsentMail {
  to: string;
  subject: string;
  text: string;
  /** Where an answer goes (a notification's reply address), when the mail names one. */
  replyTo?: string | undefined;
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
<p>To ${m.to}, <time datetime="${m.at.toISOString()}">${m.at.toISOString().replace('T', ' ').slice(0, 19)} UTC</time>${
          m.replyTo ? html`; answers go to <code>${m.replyTo}</code>` : ''
        }</p>
<div class="demo-mail-text">${linked(m.text)}</div>
</article>`,
      )
}
</main>`,
    ),
  );
