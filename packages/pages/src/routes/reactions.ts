import { hash } from 'node:crypto';
import {
  isReactionName,
  type PageMessageRecord,
  type ReactionChange,
  reactionsShown,
  reactOnPage,
  reactsOnPage,
  type Viewer,
  viewMessage,
} from '@convo/domain';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { notFound, page, refused } from '../frame.ts';
import { readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import { message } from '../views/conversation.ts';
import {
  type PickerShown,
  type ReactionsDisplay,
  reactions,
  reactionsUrl as reactionsPath,
} from '../views/reactions.ts';

/*
 * Reactions (docs/pages.md, "Reactions"): a message's form posts to
 * `/c/<slug>/messages/<id>/reactions` (`add` or `remove`, one kind), under the page's own rule
 * (404 for a message this reader does not see), within its own per-address limit; the answer is
 * the page again (303, at the message), or with `fragment` (site.js) the reactions alone. The same
 * address read is the whole set's own page ("React" without JavaScript), or with `fragment` the
 * reactions alone (a live update; `picker=inline`: the set opened in place).
 */

const MESSAGE_ID = /^[1-9]\d{0,9}$/;

/** The key an anonymous visitor's reactions are kept under: their session's, by a hash of its token. */
const sessionKey = (c: SiteContext) => hash('sha256', `react:${c.var.csrf}`, 'hex');

/** What a page shows of reactions to this reader (`viewer`, as the page's rule reads them) among `messages`. */
export async function reactionsDisplay(
  { deps }: SiteKit,
  c: SiteContext,
  viewer: Viewer,
  conversation: { allowAnonymousMessages: boolean },
  messages: readonly PageMessageRecord[],
): Promise<ReactionsDisplay> {
  return {
    csrf: reactsOnPage(viewer, conversation) && c.var.csrf !== '' ? c.var.csrf : null,
    shown: await reactionsShown(deps, c.env.account.id, { viewer, session: sessionKey(c) }, messages),
  };
}

/**
 * Where the page goes back to after a reaction: the page it was sent from (one of this
 * conversation's: a page of its messages, a thread), at the message; from the set's own page, the
 * conversation's.
 */
function backTo(c: SiteContext, slug: string, id: string): string {
  const from = c.req.header('referer');
  let path = `/c/${slug}`;
  if (from) {
    try {
      const url = new URL(from);
      const own = url.origin === c.env.account.host;
      const inside = url.pathname.toLowerCase().startsWith(`/c/${slug.toLowerCase()}`);
      if (own && inside && !url.pathname.includes('/messages/')) path = url.pathname + url.search;
    } catch {
      // Not a URL: the conversation's page.
    }
  }
  return `${path}#message-${id}`;
}

export function reactionRoutes(kit: SiteKit) {
  const { deps, posting } = kit;
  const routes = new Hono<SiteEnv>();

  /** A message this reader sees, with its reactions as they meet them; null when they do not see it. */
  async function reacted(c: SiteContext, slug: string, id: number) {
    const reader = await readerOf(deps, c, slug);
    const found = await viewMessage(deps, c.env.account, id, reader.viewer, reader.granted, slug);
    if (!found || found.conversation.slug.toLowerCase() !== slug.toLowerCase()) return null;
    const shown = await reactionsDisplay(kit, c, reader.viewer, found.conversation, [found.message]);
    return { found, csrf: shown.csrf, list: shown.shown.get(id) ?? [] };
  }

  /** A message's reactions alone, as site.js puts them in place; null when the reader does not see it. */
  async function fragment(c: SiteContext, slug: string, id: number, picker: PickerShown) {
    const now = await reacted(c, slug, id);
    return now && reactions(now.found.conversation.slug, id, now.list, now.csrf, picker);
  }

  const pickerOf = (value: string | undefined): PickerShown => (value === 'inline' ? 'inline' : 'closed');

  routes.post('/c/:slug/messages/:id/reactions', posting.sameOrigin, async (c) => {
    const id = c.req.param('id');
    const slug = c.req.param('slug');
    if (!MESSAGE_ID.test(id)) return notFound(c);
    const fields = await posting.readPost(c, undefined, {
      name: 'reaction',
      perMinute: deps.rates.reactionsPerIpPerMinute,
    });
    if (fields instanceof Response) return fields;
    const add = fields.get('add') ?? [];
    const remove = fields.get('remove') ?? [];
    const [name] = [...add, ...remove];
    if (add.length + remove.length !== 1 || name === undefined || !isReactionName(name)) {
      return refused(c, 422, 'Choose one of the reactions under the message.');
    }
    const change: ReactionChange = add.length === 1 ? { add: name } : { remove: name };
    const reader = await readerOf(deps, c, slug);
    const done = await reactOnPage(
      deps,
      c.env.account,
      Number(id),
      { ...reader, slug, session: sessionKey(c) },
      change,
    );
    if (done === 'missing') return notFound(c);
    if (done === 'refused') {
      return refused(c, 403, 'Sign in to react: this conversation takes messages only from people who sign in.');
    }
    if (fields.has('fragment')) {
      const now = await fragment(c, slug, Number(id), pickerOf(fields.get('picker')?.[0]));
      if (now === null) return notFound(c);
      return c.html(html`${now}`, 200, { 'cache-control': 'no-store', 'x-robots-tag': 'noindex' });
    }
    return c.redirect(backTo(c, slug, id), 303);
  });

  // The whole set's page ("React" without JavaScript), or the reactions alone (`fragment`: a live
  // update, the set opened in place), for whoever sees the message: the 404 for anyone else.
  routes.get('/c/:slug/messages/:id/reactions', async (c) => {
    const id = c.req.param('id');
    const slug = c.req.param('slug');
    if (!MESSAGE_ID.test(id)) return notFound(c);
    if (c.req.query('fragment') !== undefined) {
      const now = await fragment(c, slug, Number(id), pickerOf(c.req.query('picker')));
      if (now === null) return notFound(c);
      return c.html(html`${now}`, 200, { 'cache-control': 'no-store', 'x-robots-tag': 'noindex' });
    }
    const now = await reacted(c, slug, Number(id));
    if (now === null) return notFound(c);
    const { found } = now;
    const account = c.env.account;
    const at = `/c/${found.conversation.slug}#message-${found.message.id}`;
    return page(
      c,
      200,
      html`<article class="conversation react-page"><h1>React to a message</h1>${message(found.message, {
        showAuthor: true,
        link: at,
        anchor: false,
        team: account.name,
        accountKey: account.key,
        slug: found.conversation.slug,
      })}${
        now.csrf === null
          ? html`<p class="note">Sign in to react: this conversation takes messages only from people who sign in. <a href="/sign-in?return=${encodeURIComponent(reactionsPath(found.conversation.slug, found.message.id))}">Sign in</a></p>${reactions(found.conversation.slug, found.message.id, now.list, null)}`
          : reactions(found.conversation.slug, found.message.id, now.list, now.csrf, 'page')
      }<p><a href="${at}">Back to the conversation</a></p></article>`,
      'React to a message',
      { form: true, noindex: true, ...(viewerOf(c) ? { headers: { 'cache-control': 'no-store' } } : {}) },
    );
  });

  return routes;
}
