import {
  accountMailOn,
  chooseConversationMail,
  MAIL_CHOICES,
  type MailChoice,
  muteByLink,
  openMuteLink,
  setAccountMail,
} from '@convo/domain';
import { Hono } from 'hono';
import { notFound, page, refused } from '../frame.ts';
import type { SiteKit } from '../posting.ts';
import { field, type SiteEnv, viewerOf } from '../request.ts';
import * as views from '../views/mail-choices.ts';

const isChoice = (value: string | undefined): value is MailChoice => MAIL_CHOICES.some((c) => c === value);

/**
 * A person's mail: the links in notification mails (`/unsubscribe/<token>`: a page on GET, the
 * mute on POST, RFC 8058 one-click, no sign-in and no CSRF token since the signed token is the
 * authority), the settings page, and the choice under each conversation.
 */
export function mailRoutes({ deps, posting }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  routes.get('/unsubscribe/:token', async (c) => {
    const target = await openMuteLink(deps, c.env.account, c.req.param('token'));
    if (!target) return notFound(c);
    return page(c, 200, views.muteConfirm(target, c.env.account.name), 'Stop these e-mails?', { noindex: true });
  });

  routes.post('/unsubscribe/:token', async (c) => {
    // A mail provider posts `List-Unsubscribe=One-Click` (urlencoded or multipart) from its own
    // servers; the signed token in the path is all that counts, so the body is not read.
    const target = await muteByLink(deps, c.env.account, c.req.param('token'));
    if (!target) return notFound(c);
    return page(c, 200, views.muteDone(target, c.env.account.name), 'Done', { noindex: true });
  });

  routes.get('/settings', async (c) => {
    const viewer = viewerOf(c);
    const signedIn = c.var.signedIn;
    if (!viewer || !signedIn) return page(c, 200, views.settingsSignIn(), 'Your mail settings', { noindex: true });
    const state = await accountMailOn(deps, c.env.account, viewer);
    const content = views.settingsPage({
      account: c.env.account.name,
      name: signedIn.user.name,
      ...state,
      csrf: c.var.csrf,
    });
    return page(c, 200, content, 'Your mail settings', { form: true, noindex: true });
  });

  routes.post('/settings', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const viewer = viewerOf(c);
    // `mail` turns all of it on or off, `plays` the notices of plays alone.
    const mail = field(fields, 'mail');
    const plays = field(fields, 'plays');
    const [kind, choice] = mail !== undefined ? (['all', mail] as const) : (['plays', plays] as const);
    if (!viewer) return refused(c, 403, 'Sign in to change your mail settings.');
    if (choice !== 'on' && choice !== 'off') return refused(c, 400, 'Choose on or off.');
    await setAccountMail(deps, c.env.account, viewer, kind, choice === 'on');
    return c.redirect('/settings', 303);
  });

  routes.post('/c/:slug/mail', posting.sameOrigin, async (c) => {
    const fields = await posting.readPost(c);
    if (fields instanceof Response) return fields;
    const choice = field(fields, 'choice');
    if (!isChoice(choice)) return refused(c, 400, 'Choose follow, unfollow, mute or unmute.');
    const outcome = await chooseConversationMail(deps, c.env.account, viewerOf(c), c.req.param('slug'), choice);
    switch (outcome.kind) {
      case 'not_found':
        return notFound(c);
      case 'refused':
        return refused(c, 422, outcome.problem);
      case 'done':
        return c.redirect(`/c/${outcome.slug}#mail`, 303);
    }
  });

  return routes;
}
