import type { ConversationMail, MuteTarget } from '@convo/domain';
import { html } from 'hono/html';
import { csrfField } from './forms.ts';
import type { Html } from './layout.ts';

/*
 * The pages and forms of a person's mail: the choice under a conversation, the settings page, and
 * the page behind a mail's "no more mail" link.
 */

const choice = (slug: string, csrf: string, value: string, label: string, secondary = false): Html =>
  html`<form method="post" action="/c/${slug}/mail#mail" class="inline">${csrfField(csrf)}<button type="submit" name="choice" value="${value}"${secondary ? html` class="secondary"` : ''}>${label}</button></form>`;

/** Under a conversation, for a signed-in person: whether they get its mail, and the one button that changes it. */
export function conversationMailChoice(slug: string, mail: ConversationMail, csrf: string): Html {
  let body: Html;
  if (mail.mutedAll) {
    body = html`<p>You get no mail from this site. <a href="/settings">Turn it back on in your mail settings</a>.</p>`;
  } else if (mail.receiving) {
    body = html`<p>You get an e-mail when someone writes here (at most one every few minutes).</p>${choice(slug, csrf, mail.member ? 'mute' : 'unfollow', 'Stop e-mails about this conversation', true)}`;
  } else if (mail.muted && (mail.member || mail.following)) {
    body = html`<p>You get no e-mail about this conversation.</p>${choice(slug, csrf, 'unmute', 'E-mail me again')}`;
  } else if (mail.mayFollow) {
    body = html`<p>Follow this conversation to get an e-mail when someone writes here.</p>${choice(slug, csrf, 'follow', 'Follow by e-mail')}`;
  } else {
    return html``;
  }
  return html`<section id="mail" aria-labelledby="mail-heading" class="mail-choice">
<h2 id="mail-heading">E-mail</h2>
${body}${mail.receiving ? playsChoice(slug, mail, csrf) : ''}
</section>`;
}

/** Under the mail choice, for someone who gets this conversation's mail: whether it tells them of plays of their recordings. */
function playsChoice(slug: string, mail: ConversationMail, csrf: string): Html {
  if (mail.playsMutedAll) {
    return html`<p>You get no e-mail when someone plays your recordings. <a href="/settings">Your mail settings</a> turn it back on.</p>`;
  }
  return mail.playsMuted
    ? html`<p>You get no e-mail when someone plays your recordings here.</p>${choice(slug, csrf, 'unmute_plays', 'Tell me when my recordings are played')}`
    : html`<p>Your own recordings here: you hear when someone plays one, in the same e-mail.</p>${choice(slug, csrf, 'mute_plays', 'Stop play notices for this conversation', true)}`;
}

/** The settings page: all of the account's mail on or off, and its play notices. */
export function settingsPage(state: {
  account: string;
  name: string;
  on: boolean;
  playsOn: boolean;
  csrf: string;
}): Html {
  return html`<h1>Your mail settings</h1>
<p>Signed in as ${state.name}.</p>
<p>${
    state.on
      ? `You get an e-mail when someone writes in a conversation of ${state.account} you belong to or follow.`
      : `You get no e-mail about ${state.account}'s conversations.`
  }</p>
<form method="post" action="/settings">${csrfField(state.csrf)}
<button type="submit" name="mail" value="${state.on ? 'off' : 'on'}">${state.on ? 'Stop all these e-mails' : 'Turn these e-mails back on'}</button>
</form>
<p>Sign-in links are sent whatever you choose here: they come only when you ask for one.</p>
<h2>When your recordings are played</h2>
<p>${
    state.playsOn
      ? 'The same e-mails tell you when someone plays a recording you sent ("Pat played your message").'
      : 'You are not told when someone plays a recording you sent.'
  }</p>
<form method="post" action="/settings">${csrfField(state.csrf)}
<button type="submit" name="plays" value="${state.playsOn ? 'off' : 'on'}">${state.playsOn ? 'Stop play notices' : 'Tell me when my recordings are played'}</button>
</form>
<h2>Your devices</h2>
<form method="post" action="/sign-out" class="devices">${csrfField(state.csrf)}<input type="hidden" name="return" value="/settings">
<p>Signed in on a device you no longer have?</p>
<p><button type="submit" name="everywhere" value="1" class="secondary">Sign out everywhere</button></p>
</form>`;
}

export const settingsSignIn = (): Html => html`<h1>Your mail settings</h1>
<p><a href="/sign-in?return=/settings">Sign in</a> to choose which e-mails you get.</p>`;

/** What a mail's link stops, in words. */
function stops(target: MuteTarget, account: string): string {
  const where = target.conversationId === 0 ? `any conversation on ${account}` : `this conversation on ${account}`;
  return target.kind === 'plays' ? `e-mail when someone plays your recordings in ${where}` : `e-mail about ${where}`;
}

/** Behind a mail's link (GET): what it stops, and the one button that does it (mail scanners only look). */
export function muteConfirm(target: MuteTarget, account: string): Html {
  return html`<h1>Stop these e-mails?</h1>
<p>You will get no more ${stops(target, account)}.</p>
<form method="post"><button type="submit">Stop the e-mails</button></form>`;
}

export function muteDone(target: MuteTarget, account: string): Html {
  return html`<h1>Done</h1>
<p>You get no more ${stops(target, account)}.</p>
<p>Changed your mind? <a href="/settings">Your mail settings</a> turn them back on.</p>`;
}
