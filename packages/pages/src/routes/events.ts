import type { Viewer } from '@convo/domain';
import {
  conversationUrl,
  type LiveEvent,
  type LiveScope,
  maySeeConversation,
  seesEveryConversation,
  seesInternalNotes,
  seesPlays,
  THREAD_PREVIEW_REPLIES,
  viewMessage,
  viewThread,
  visibleConversation,
} from '@convo/domain';
import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { SESSION_COOKIE, SESSION_TTL_SECONDS } from '../cookies.ts';
import type { LiveStreamRequest } from '../deps.ts';
import { notFound, page } from '../frame.ts';
import { passOf, readerFrom, readerOf } from '../passes.ts';
import type { SiteKit } from '../posting.ts';
import { type SiteContext, type SiteEnv, viewerOf } from '../request.ts';
import { messageItem } from '../views/conversation.ts';
import * as forms from '../views/forms.ts';
import { messageActions } from '../views/moderation.ts';
import { playedDisplay } from './plays.ts';
import { reactionsDisplay } from './reactions.ts';
import { transcriptsDisplay } from './transcripts.ts';

/*
 * Live conversations: `<page>/events` is a `text/event-stream` of what changes on the page (a
 * message posted, hidden, shown again or deleted; the members), for a conversation's page, its
 * embed and the team's inbox (`/events`). Each event's `id` is a position in the feed: a browser
 * that reconnects with `Last-Event-ID` gets what it missed, in order. An event carries ids only;
 * the page fetches the message itself from `<page>/messages/<id>`, with the page's own rule. Who
 * may follow a stream is the page's rule, asked again when a session ends or a member is taken
 * out. Without JavaScript none of this is used: the pages are whole on their own.
 */

/**
 * Where a conversation's page or embed is followed from: its stream (from the position the page
 * was rendered at), and each message (`{id}`), with an embed's pass when it has one.
 */
export const liveAddresses = (base: string, position: string | null) => ({
  events: `${base}/events${position ? `?${new URLSearchParams({ after: position })}` : ''}`,
  messages: `${base}/messages/{id}`,
});

/** What a conversation's page is told of each event. */
function conversationEvent(e: LiveEvent): { event: string; data: Record<string, unknown> } | null {
  switch (e.kind) {
    case 'posted':
    case 'hidden':
    case 'shown':
    case 'deleted':
    case 'played':
    case 'reacted':
    case 'transcribed':
      return { event: e.kind, data: { message_id: e.messageId } };
    case 'member_added':
    case 'member_removed':
      return { event: 'members', data: {} };
    default:
      return null;
  }
}

/** What the inbox is told: that a conversation changed (the page reads its rows again); a play, a reaction or a transcript changes none. */
const inboxEvent = (e: LiveEvent) =>
  e.conversationId === null || e.kind === 'played' || e.kind === 'reacted' || e.kind === 'transcribed'
    ? null
    : { event: 'conversation', data: { conversation_id: e.conversationId } };

const MESSAGE_ID = /^[1-9]\d{0,9}$/;

/** The rule of a stream whose reader nobody knows (the hub never asks it). */
const nobodyToAsk = async () => true;

export function eventRoutes(kit: SiteKit) {
  const { deps } = kit;
  const routes = new Hono<SiteEnv>();

  /**
   * Who reads now, as the request that opened the stream said: the same session, still valid (its
   * role as it is now), or nobody signed in; undefined when that session ended. It keeps the
   * session's token, not the request: a stream lives long, and holds as little as it can.
   */
  const viewerNow = (c: SiteContext) => {
    const account = c.env.account.id;
    const token = c.var.signedIn ? getCookie(c, SESSION_COOKIE) : undefined;
    return async (): Promise<Viewer | undefined> => {
      if (!token) return null;
      const session = await deps.people.session(account, token, SESSION_TTL_SECONDS);
      return session ? { userId: session.user.id, teamRole: session.teamRole } : undefined;
    };
  };

  /** The stream's answer: the events, or why not (a page, as every refusal of the site). */
  async function stream(c: SiteContext, request: Omit<LiveStreamRequest, 'clientIp' | 'after'>) {
    const headers = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // nginx (and proxies that read it) pass each event on as it comes.
      'x-accel-buffering': 'no',
    };
    // HEAD opens nothing: there would be no one to read it.
    if (c.req.method === 'HEAD') return new Response(null, { headers });
    const opened = await deps.live.open({
      ...request,
      clientIp: c.env.visit.clientIp,
      after: c.req.header('last-event-id') ?? c.req.query('after') ?? null,
    });
    if ('refused' in opened) {
      return page(c, opened.refused, forms.formRefused(opened.reason), 'Too many live streams', {
        headers: { 'retry-after': String(opened.retryAfterSeconds) },
      });
    }
    return new Response(opened.body, { headers });
  }

  /**
   * A conversation's stream, for its page or its embed (`slug` as the page has it). An internal
   * note's events go to the team's streams alone (an embed's never): anyone else's stream is not
   * told a note was posted, hidden or deleted.
   */
  async function conversationStream(c: SiteContext, slug: string, embed: boolean) {
    const account = c.env.account;
    const reader = await readerOf(deps, c, slug);
    const target = await visibleConversation(deps, account, slug, reader.viewer, reader.granted);
    if (!target) return notFound(c);
    const userId = reader.viewer?.userId ?? null;
    // Asked again with the rule when the reader's place on the team changes (an embed shows neither).
    let notes = !embed && seesInternalNotes(reader.viewer);
    let receipts: Viewer = embed ? null : reader.viewer;
    return stream(c, {
      scope: { accountId: account.id, conversationId: target.id },
      userId,
      passHolder: reader.granted !== null,
      // The hub asks again only of a reader it knows or a start's pass (either may lose the right:
      // the team takes the person out or ends the pass): a stream of nobody's keeps no rule, for
      // it is one of thousands held for hours.
      stillAllowed:
        userId === null && reader.granted === null
          ? nobodyToAsk
          : ruleAgain(c, slug, (viewer) => {
              notes = !embed && seesInternalNotes(viewer);
              receipts = embed ? null : viewer;
            }),
      describe: (e) => {
        if (e.internal && !notes) return null;
        // A receipt goes to those who see it (the page's rule): the team and the message's author.
        if (e.kind === 'played') return seesPlays(receipts, e.userId) ? conversationEvent(e) : null;
        return conversationEvent(e);
      },
    });
  }

  /** The conversation page's rule, asked again of the reader who opened the stream (`seen`: who they are now). */
  function ruleAgain(c: SiteContext, slug: string, seen: (viewer: Viewer) => void) {
    const account = c.env.account;
    const now = viewerNow(c);
    const grantsOnce = passOf(deps, c);
    return async () => {
      const viewer = await now();
      if (viewer === undefined) return false;
      seen(viewer);
      const again = await readerFrom(deps, account.id, viewer, viewer ? new Map() : await grantsOnce, slug);
      return (await visibleConversation(deps, account, slug, again.viewer, again.granted)) !== null;
    };
  }

  /** One message of a conversation, as an item of its list (a live update fetches it). */
  async function messageFragment(c: SiteContext, slug: string, embed: boolean) {
    const account = c.env.account;
    const id = c.req.param('id') ?? '';
    if (!MESSAGE_ID.test(id)) return notFound(c);
    const reader = await readerOf(deps, c, slug);
    const found = await viewMessage(deps, account, Number(id), reader.viewer, reader.granted, slug, embed);
    if (!found || found.conversation.slug.toLowerCase() !== slug.toLowerCase()) return notFound(c);
    const url = conversationUrl(account, found.conversation.slug);
    const viewer = embed ? null : viewerOf(c);
    // A message of the conversation shown again (`?thread`) comes back with its thread.
    const thread =
      found.message.parentId === null && c.req.query('thread') !== undefined
        ? await viewThread(deps, account, slug, found.message.id, reader.viewer, reader.granted, embed)
        : null;
    const replies = thread?.messages.slice(1) ?? [];
    const item = messageItem(
      found.message,
      url,
      found.conversation.slug,
      {
        team: account.name,
        accountKey: account.key,
        newTab: embed,
        actions: embed
          ? undefined
          : messageActions(found.conversation.slug, viewer, c.var.csrf, BigInt(Date.now()) * 1000n),
        threads: !embed,
        // An embed's player reports no play (a page of another site: no cookie of ours goes with it).
        played: embed ? undefined : await playedDisplay(kit, c, reader.viewer, [found.message, ...replies]),
        reactions: embed
          ? undefined
          : await reactionsDisplay(kit, c, reader.viewer, found.conversation, [found.message, ...replies]),
        transcripts: await transcriptsDisplay(kit, c, embed ? null : reader.viewer, [found.message, ...replies]),
      },
      {
        preview: { count: replies.length, latest: replies.slice(-THREAD_PREVIEW_REPLIES) },
        base: embed ? url : `/c/${found.conversation.slug}`,
      },
    );
    return c.html(html`${item}`, 200, {
      'cache-control': found.conversation.anyoneCanPost ? 'private, no-cache' : 'no-store',
      'x-robots-tag': 'noindex',
    });
  }

  routes.get('/c/:slug/events', (c) => conversationStream(c, c.req.param('slug'), false));
  routes.get('/c/:slug/messages/:id', (c) => messageFragment(c, c.req.param('slug'), false));
  routes.get('/embeds/conversations/:key/:slug/events', (c) =>
    c.req.param('key') === c.env.account.key ? conversationStream(c, c.req.param('slug'), true) : notFound(c),
  );
  routes.get('/embeds/conversations/:key/:slug/messages/:id', (c) =>
    c.req.param('key') === c.env.account.key ? messageFragment(c, c.req.param('slug'), true) : notFound(c),
  );

  // The team's inbox: every conversation of the account its reader may see.
  routes.get('/events', async (c) => {
    const account = c.env.account;
    const viewer = viewerOf(c);
    if (!viewer?.teamRole) return notFound(c);
    const now = viewerNow(c);
    const scope: LiveScope = { accountId: account.id, conversationId: null };
    let current = viewer;
    return stream(c, {
      scope,
      userId: viewer.userId,
      async stillAllowed() {
        const again = await now();
        if (!again?.teamRole) return false;
        current = again;
        return true;
      },
      admits: async (e) =>
        e.conversationId !== null &&
        (seesEveryConversation(current.teamRole) ||
          (await maySeeConversation(deps, account, e.conversationId, current))),
      describe: inboxEvent,
    });
  });

  return routes;
}
