import { viewInbox, viewMyConversations } from '@convo/domain';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { notFound, page } from '../frame.ts';
import { passOpened } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { type SiteEnv, viewerOf } from '../request.ts';
import { inbox, myConversations } from '../views/inbox.ts';
import type { intakeRoutes } from './intake.ts';

/**
 * `/` on an account's host: the team's inbox for a signed-in team member (`?q=`, `?tag=`, `?state=`,
 * `?assignee=`, `?source=`, `?archived=1`, `?page=`); for anyone else the account's primary intake page (its form posts to `/`), or, when
 * it has none, a small landing page of the account with a way to sign in (the header's link,
 * which brings the person back here). Sign-in and sign-out that lead nowhere else end here, never
 * on a 404.
 */
export function homeRoutes({ deps, posting }: SiteKit, intake: ReturnType<typeof intakeRoutes>) {
  const routes = new Hono<SiteEnv>();
  const primary = { key: null, embed: false };

  routes.post('/', posting.sameOrigin, (c) => intake.start(c, primary));

  routes.get('/', async (c) => {
    const account = c.env.account;
    const viewer = viewerOf(c);
    if (viewer?.teamRole) {
      const asked = c.req.query('page');
      const number = asked === undefined ? 1 : /^\d{1,16}$/.test(asked) ? Number(asked) : Number.NaN;
      const found = await viewInbox(deps, account, viewer, number, {
        tag: c.req.query('tag'),
        search: c.req.query('q'),
        state: c.req.query('state'),
        assignee: c.req.query('assignee'),
        source: c.req.query('source'),
        archived: c.req.query('archived') === '1',
      });
      if (!found) return notFound(c);
      return page(c, 200, inbox(account.name, found), found.filter.archived ? 'Archive' : 'Inbox', {
        headers: { 'cache-control': 'no-store' },
      });
    }
    // Someone who takes part: their own conversations first (signed in, or opened by this
    // device's pass), then the form or the landing page as anyone gets it.
    const opened = viewer ? [] : await passOpened(deps, c);
    const mine = myConversations(await viewMyConversations(deps, account, viewer, opened));
    const primaryPage = await intake.find(c, primary);
    if (primaryPage) return intake.show(c, primaryPage, primary, 200, undefined, mine);
    const signedIn = c.var.signedIn?.user ?? null;
    const content = html`${mine}<h1>${account.name}</h1>
<p>${account.name} holds its conversations here. Each has its own address: open the link you were given to read it and reply.</p>
${
  signedIn
    ? html`<p>You are signed in as ${signedIn.name}: the conversations you belong to open for you, private ones included.</p>`
    : html`<p><a href="/sign-in?return=/">Sign in</a> to read the private conversations you belong to and to reply under your name.</p>`
}`;
    return page(c, 200, content, account.name);
  });

  return routes;
}
