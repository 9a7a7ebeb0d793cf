import { conversationUrl, isIndexable, viewConversation, viewMessage } from '@convo/domain';
import { Hono } from 'hono';
import { html } from 'hono/html';
import { COOKIE_VALUE } from '../cookies.ts';
import { notFound, page } from '../frame.ts';
import { handoffToken, keepEmbedPass, passCodeHash, passOf, readerFrom, withGrant } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { type SiteEnv, viewerOf } from '../request.ts';
import { conversation, message } from '../views/conversation.ts';
import { pageParam } from './conversation.ts';
import { liveAddresses } from './events.ts';
import { transcriptsDisplay } from './transcripts.ts';

/** `<message_id>` or, as the API prints embed_message_url, `<message_id>&show_author=<value>`. */
const MESSAGE_KEY = /^(\d{1,10})(?:&show_author=([^&]*))?$/;

/** The embeds (`conversation_embed_url`, `embed_message_url`): the content alone, for an iframe on any site. */
export function embedRoutes({ deps }: SiteKit) {
  const routes = new Hono<SiteEnv>();

  routes.get('/embeds/conversations/:key/:slug', async (c) => {
    const account = c.env.account;
    if (c.req.param('key') !== account.key) return notFound(c);
    const pageNumber = pageParam(c);
    if (pageNumber === undefined) return notFound(c);
    const slug = c.req.param('slug');
    const viewer = viewerOf(c);
    let grants = viewer ? new Map() : await passOf(deps, c);
    // The landing of a start in this frame: its one-time code, taken once, becomes the frame's pass.
    const code = c.req.query('code');
    if (code !== undefined && !viewer && COOKIE_VALUE.test(code)) {
      const grant = await deps.intake.takePassCode(account.id, passCodeHash(code));
      if (grant) {
        grants = withGrant(grants, grant);
        await keepEmbedPass(deps, c, grant);
      }
    }
    const reader = await readerFrom(deps, account.id, viewer, grants, slug);
    const found = await viewConversation(deps, account, slug, reader.viewer, pageNumber, reader.granted, true);
    if (!found) return notFound(c);
    const url = conversationUrl(account, found.slug);
    // The way to answer: the conversation's own page, at its form, outside the frame. A visitor
    // whose start this frame holds takes it along in the button's form (the page keeps it as a
    // cookie of its own): a body, never an address.
    const reply = reader.grant
      ? html`<form class="embed-reply" method="post" action="/c/${found.slug}/pass" target="_blank"><input type="hidden" name="csrf" value="${handoffToken(await deps.secrets.signingKey(), account.id, reader.grant)}"><button type="submit">Reply on ${account.name}</button></form>`
      : html`<p class="embed-reply"><a href="${url}#reply" target="_blank" rel="noopener">Reply on ${account.name}</a></p>`;
    return page(
      c,
      200,
      html`${conversation(found, url, {
        team: account.name,
        accountKey: account.key,
        newTab: true,
        page: pageNumber,
        transcripts: await transcriptsDisplay({ deps }, c, null, found.messages),
        live: liveAddresses(`/embeds/conversations/${account.key}/${found.slug}`, deps.live.position()),
      })}${reply}`,
      found.title,
      {
        embed: true,
        // A private conversation's embed, seen by a member, is kept by no cache at all (as its page).
        ...(found.anyoneCanPost ? {} : { headers: { 'cache-control': 'no-store' } }),
        noindex: !isIndexable(found),
        canonical: url,
      },
    );
  });

  routes.get('/embeds/messages/:key/:message', async (c) => {
    const account = c.env.account;
    const parsed = MESSAGE_KEY.exec(c.req.param('message'));
    if (c.req.param('key') !== account.key || !parsed) return notFound(c);
    // Its number can be counted: an unlisted conversation's message needs its slug (`?c=`) too.
    const found = await viewMessage(
      deps,
      account,
      Number(parsed[1]),
      viewerOf(c),
      null,
      c.req.query('c') ?? null,
      true,
    );
    if (!found) return notFound(c);
    const showAuthor = (parsed[2] ?? c.req.query('show_author')) === 'true';
    const target = `${conversationUrl(account, found.conversation.slug)}#message-${found.message.id}`;
    return page(
      c,
      200,
      html`<h1 class="embed-title">${found.conversation.title}</h1>
${message(found.message, {
  showAuthor,
  link: target,
  anchor: false,
  team: account.name,
  accountKey: account.key,
  slug: found.conversation.slug,
  newTab: true,
  threadLabel: true,
  transcript: (await transcriptsDisplay({ deps }, c, null, [found.message])).kept.get(found.message.id),
})}`,
      found.conversation.title,
      {
        embed: true,
        noindex: !isIndexable(found.conversation),
        canonical: target,
        ...(found.conversation.anyoneCanPost ? {} : { headers: { 'cache-control': 'no-store' } }),
      },
    );
  });

  return routes;
}
