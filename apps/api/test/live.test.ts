import { randomBytes } from 'node:crypto';
import { type ClientRequest, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LiveListener, loadSeed, PgLiveLog } from '@convo/db';
import type { LiveLog } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../src/http/app.ts';
import { createLiveHub, type LiveOptions } from '../src/live/hub.ts';
import { createLogger } from '../src/logger.ts';
import { nodeServer } from '../src/start/serve-node.ts';
import { type EventStream, listen, openStream } from './support/events.ts';
import { apiCall, auth, type Harness, openHarness, testSettings } from './support/harness.ts';
import { attr, elements, present, textOf, Visitor } from './support/site.ts';

/*
 * Live conversations over HTTP: a page's event stream gets each message posted, hidden, shown
 * again or deleted and each member change, in order, with positions a reconnecting browser resumes
 * from; the same rule as the page decides who may follow it, at every change; the team's inbox
 * hears of its conversations only; streams are capped per address and per process, HEAD opens
 * none, and a stopping server sends each its retry hint.
 */

const HOST = 'https://live.example.com';
const TOKEN = 'live-test-token-0123456789';

let h: Harness;
let listener: LiveListener;
let ids: Record<string, number>;
let account: number;

beforeAll(async () => {
  h = await openHarness({ app: { site: { limits: { perIpPerMinute: 10_000, perEmailPer15Minutes: 10_000 } } } });
  await loadSeed(h.db.orm.em.fork(), {
    accounts: [
      {
        key: 'live',
        name: 'Live Desk',
        host: HOST,
        owner: 'olivia@live.example',
        users: [
          { email: 'olivia@live.example', name: 'Olivia Owner' },
          { email: 'sam@live.example', name: 'Sam Support', team: 'member' },
          { email: 'pat@customer.example', name: 'Pat Customer' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          { title: 'Open', slug: 'open', allow_anonymous_messages: true, members: ['olivia@live.example'] },
          {
            title: 'Private',
            slug: 'private',
            anyone_can_post: false,
            members: ['olivia@live.example', 'pat@customer.example'],
            messages: [{ author: 'pat@customer.example', text: 'Something private' }],
          },
          { title: 'Team only', slug: 'team-only', anyone_can_post: false, members: ['olivia@live.example'] },
          { title: 'Quiet', slug: 'quiet', allow_anonymous_messages: true },
        ],
      },
    ],
  });
  const rows: { key: string; id: number }[] = await h.db.orm.em
    .fork()
    .getConnection()
    .execute(`select email as key, id from account_user union all select slug, id from conversation`);
  ids = Object.fromEntries(rows.map((r) => [r.key, r.id]));
  account = (await h.services.site.accountByHost([HOST]))?.id ?? 0;
  listener = listen(h);
}, 60_000);

afterAll(async () => {
  await listener?.close();
  h?.services.live.close();
  await h?.close();
});

/** A person signed in on the site (a session of theirs, as the mailed link makes one). */
async function signedIn(email: string): Promise<Visitor> {
  const v = new Visitor(h, HOST);
  const token = randomBytes(32).toString('base64url');
  await h.services.people.createSession(account, present(ids[email]), token, 3600);
  v.cookies.set('convo_session', token);
  return v;
}

const cookie = (v: Visitor) => v.cookieHeader();

const streams: EventStream[] = [];
async function follow(path: string, v?: Visitor, headers: Record<string, string> = {}) {
  const s = await openStream(h, `${HOST}${path}`, { ...(v ? cookie(v) : {}), ...headers });
  streams.push(s);
  return s;
}

/** Posts an anonymous reply on a public conversation's page; the new message's id. */
async function reply(slug: string, text: string, v = new Visitor(h, HOST)): Promise<number> {
  const posted = await v.reply(slug, { text });
  expect(posted.status).toBe(303);
  return Number(/#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1]);
}

const moderate = async (v: Visitor, slug: string, id: number, action: string) => {
  await v.get(`/c/${slug}`);
  return v.post(`/c/${slug}/messages/${id}`, { csrf: v.hidden('csrf'), action });
};

describe('a conversation page’s stream', () => {
  it('is where the page says, from the position it was rendered at', async () => {
    const page = await new Visitor(h, HOST).get('/c/open');
    const article = present(elements(page.html).find((e) => e.tagName === 'article' && attr(e, 'data-events')));
    expect(attr(article, 'data-events')).toMatch(/^\/c\/open\/events(\?after=\d+\.\d+)?$/);
    expect(attr(article, 'data-messages')).toBe('/c/open/messages/{id}');
    const s = await follow('/c/open/events');
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    expect(s.headers.get('cache-control')).toBe('no-store');
    expect((await s.next((e) => e.retry !== undefined)).retry).toMatch(/^\d+$/);
    s.close();
  });

  it('tells of each message posted, hidden, shown again and deleted, and of member changes, in order', async () => {
    const s = await follow('/c/open/events');
    const first = await reply('open', 'First live words');
    expect(await s.named('posted')).toMatchObject({ data: { message_id: first } });

    // The page fetches the message as it renders it: an item of its list.
    const item = await new Visitor(h, HOST).get(`/c/open/messages/${first}`);
    expect(item.status).toBe(200);
    expect(item.html).toMatch(/^<li><article class="message" id="message-\d+">/);
    expect(item.html).toContain('First live words');

    const olivia = await signedIn('olivia@live.example');
    expect((await moderate(olivia, 'open', first, 'hide')).status).toBe(303);
    expect(await s.named('hidden')).toMatchObject({ data: { message_id: first } });
    expect((await new Visitor(h, HOST).get(`/c/open/messages/${first}`)).status).toBe(404);
    expect((await moderate(olivia, 'open', first, 'show')).status).toBe(303);
    expect(await s.named('shown')).toMatchObject({ data: { message_id: first } });

    const added = await apiCall(h, 'POST', '/conversations/add_conversation_member', auth(TOKEN), {
      slug: 'open',
      email: 'sam@live.example',
    });
    expect(added.status).toBe(200);
    await s.named('members');

    const pat = await signedIn('pat@customer.example');
    const own = await reply('open', 'Mine, for a moment', pat);
    await s.named('posted');
    await s.named('members');
    expect((await moderate(pat, 'open', own, 'delete')).status).toBe(303);
    expect(await s.named('deleted')).toMatchObject({ data: { message_id: own } });
    // Each event's id is a position, in order.
    const positions = s.events.filter((e) => e.event).map((e) => e.id ?? '');
    const pairs = positions.map((p) => p.split('.').map(BigInt) as [bigint, bigint]);
    for (let i = 1; i < pairs.length; i++) {
      const [a, b] = [pairs[i - 1] as [bigint, bigint], pairs[i] as [bigint, bigint]];
      expect(b[0] > a[0] || (b[0] === a[0] && b[1] > a[1])).toBe(true);
    }
    s.close();
  });

  it('gives a browser that reconnects with Last-Event-ID what it missed, in order, then the live feed', async () => {
    const s = await follow('/c/quiet/events');
    await reply('quiet', 'Before the cut');
    const seen = await s.named('posted');
    s.close();
    const missed = [await reply('quiet', 'While away 1'), await reply('quiet', 'While away 2')];
    const again = await follow('/c/quiet/events', undefined, { 'last-event-id': present(seen.id) });
    expect((await again.named('posted')).data.message_id).toBe(missed[0]);
    expect((await again.named('posted')).data.message_id).toBe(missed[1]);
    const live = await reply('quiet', 'After');
    expect((await again.named('posted')).data.message_id).toBe(live);
    // The position the page was rendered at does the same for a first connection.
    const page = await new Visitor(h, HOST).get('/c/quiet');
    const events = present(attr(present(elements(page.html).find((e) => attr(e, 'data-events'))), 'data-events'));
    const later = await reply('quiet', 'Between the page and its stream');
    const fromPage = await follow(events);
    expect((await fromPage.named('posted')).data.message_id).toBe(later);
    again.close();
    fromPage.close();
  });

  it('starts a browser from its page again when its position is not one it can resume from', async () => {
    const s = await follow('/c/quiet/events', undefined, { 'last-event-id': '9223372036854775806.1' });
    await s.named('reset');
    await s.closed();
  });
});

describe('who may follow', () => {
  it('answers a private conversation’s stream and messages 404 to anyone but its members, as its page', async () => {
    const stranger = new Visitor(h, HOST);
    expect((await follow('/c/private/events')).status).toBe(404);
    expect((await stranger.get(`/c/private/messages/${ids.private}`)).status).toBe(404);
    const sam = await signedIn('sam@live.example');
    expect((await follow('/c/private/events', sam)).status).toBe(404);
    expect((await follow('/embeds/conversations/live/private/events', sam)).status).toBe(404);
    expect((await follow('/embeds/conversations/other/open/events')).status).toBe(404);
  });

  it('ends the stream of a member taken out, and of a session that ended, at that change', async () => {
    const pat = await signedIn('pat@customer.example');
    const s = await follow('/c/private/events', pat);
    expect(s.status).toBe(200);
    await s.next((e) => e.retry !== undefined);
    const removed = await apiCall(h, 'POST', '/conversations/remove_conversation_member', auth(TOKEN), {
      slug: 'private',
      email: 'pat@customer.example',
    });
    expect(removed.status).toBe(200);
    await s.named('end');
    await s.closed();
    expect((await follow('/c/private/events', pat)).status).toBe(404);

    const olivia = await signedIn('olivia@live.example');
    const hers = await follow('/c/private/events', olivia);
    await hers.next((e) => e.retry !== undefined);
    await olivia.get('/c/private');
    expect((await olivia.post('/sign-out', { csrf: olivia.hidden('csrf') })).status).toBe(303);
    await hers.named('end');
    await hers.closed();
  });

  it('ends the stream of a session that ran out by its time, asked again now and then', async () => {
    const live = createLiveHub(
      new PgLiveLog(h.db.orm.em.fork()),
      { perClient: 5, max: 5, heartbeatMs: 50, recheckMs: 100 },
      createLogger('silent'),
    );
    const app = createApp({ ...h.services, live }, testSettings());
    try {
      const pat = await signedIn('olivia@live.example');
      const res = await app.fetch(new Request(`${HOST}/c/private/events`, { headers: cookie(pat) }));
      expect(res.status).toBe(200);
      // No event says so: the session's time is simply up.
      await h.db.orm.em
        .fork()
        .getConnection()
        .execute(`update site_session set expires_at = now() - interval '1 second' where user_id = ?`, [
          ids['olivia@live.example'],
        ]);
      const text = await new Response(res.body).text();
      expect(text).toContain('event: end');
    } finally {
      live.close();
    }
  });

  it('tells the team’s inbox of the conversations its reader may see, and nobody else', async () => {
    expect((await follow('/events')).status).toBe(404);
    expect((await follow('/events', await signedIn('pat@customer.example'))).status).toBe(404);
    const sam = await follow('/events', await signedIn('sam@live.example'));
    const olivia = await follow('/events', await signedIn('olivia@live.example'));
    expect(sam.status).toBe(200);
    const inbox = await (await signedIn('olivia@live.example')).get('/');
    expect(elements(inbox.html).some((e) => attr(e, 'data-events') === '/events')).toBe(true);

    // A private conversation Sam is not in: Olivia (the owner) hears of it, Sam does not.
    const owner = await signedIn('olivia@live.example');
    expect((await owner.reply('team-only', { text: 'Owners only' })).status).toBe(303);
    expect((await olivia.named('conversation')).data).toEqual({ conversation_id: ids['team-only'] });
    const open = await reply('open', 'For everyone');
    expect((await olivia.named('conversation')).data).toEqual({ conversation_id: ids.open });
    expect((await sam.named('conversation')).data).toEqual({ conversation_id: ids.open });
    expect(open).toBeGreaterThan(0);
    expect(sam.events.filter((e) => e.event === 'conversation')).toHaveLength(1);
  });
});

/** The harness's services with a hub of their own (its limits, its shutdown), and their app. */
function withOwnHub(options: LiveOptions, log: LiveLog = new PgLiveLog(h.db.orm.em.fork())) {
  const services = { ...h.services, live: createLiveHub(log, options, createLogger('silent')) };
  return { services, app: createApp(services, testSettings()) };
}

describe('limits and shutdown', () => {
  it('opens nothing for HEAD', async () => {
    const before = h.services.live.stats().streams;
    const res = await h.app.fetch(new Request(`${HOST}/c/open/events`, { method: 'HEAD' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(h.services.live.stats().streams).toBe(before);
  });

  it('caps streams per client address (429) and per process (503), with Retry-After and a page that says why', async () => {
    const { services, app } = withOwnHub({ perClient: 2, max: 3 });
    const open = (ip: string) => app.fetch(new Request(`${HOST}/c/open/events`), { clientIp: ip });
    try {
      const held = [await open('10.0.0.1'), await open('10.0.0.1')];
      const third = await open('10.0.0.1');
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await third.text()).toContain('Too many live streams are open from your address.');
      held.push(await open('10.0.0.2'));
      const full = await open('10.0.0.3');
      expect(full.status).toBe(503);
      expect(await full.text()).toContain('This server holds all the live streams it can.');
      // A stream whose browser went away gives its place back.
      await held[0]?.body?.cancel();
      expect((await open('10.0.0.3')).status).toBe(200);
    } finally {
      services.live.close();
    }
  });

  it('caps one account’s streams whatever their addresses, and counts an IPv6 client by its /64', async () => {
    const { services, app } = withOwnHub({ perClient: 2, max: 100, perAccount: 4 });
    const open = (ip: string) => app.fetch(new Request(`${HOST}/c/open/events`), { clientIp: ip });
    try {
      // Two addresses of one /64 are one client: its third stream is refused.
      expect((await open('2001:db8:5:6::1')).status).toBe(200);
      expect((await open('2001:db8:5:6::2')).status).toBe(200);
      const third = await open('2001:db8:5:6:ffff::3');
      expect(third.status).toBe(429);
      await third.text();
      // Other clients fill the account's share; past it, a 503 whoever asks.
      expect((await open('2001:db8:5:7::1')).status).toBe(200);
      expect((await open('198.51.100.1')).status).toBe(200);
      const full = await open('198.51.100.2');
      expect(full.status).toBe(503);
      expect(full.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await full.text()).toContain('This site has all the live streams it may hold here.');
    } finally {
      services.live.close();
    }
  });

  it('tells every stream to come back in a moment when the server stops, and takes no new one', async () => {
    const { services, app } = withOwnHub({ perClient: 5, max: 5, retryMs: 750 });
    const res = await app.fetch(new Request(`${HOST}/c/open/events`));
    const text = (async () => {
      const chunks: string[] = [];
      for await (const chunk of (res.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream())) {
        chunks.push(chunk);
      }
      return chunks.join('');
    })();
    app.drain();
    expect(await text).toMatch(/retry: 750\n\n$/);
    expect((await app.fetch(new Request(`${HOST}/c/open/events`))).status).toBe(503);
    services.live.close();
  });
});

/** A stream read over real HTTP from `base` (a Node server of the app), as the page's host names it. */
function overHttp(base: string, path: string) {
  let text = '';
  let request: ClientRequest | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    request = get(`${base}${path}`, { headers: { host: new URL(HOST).host, accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('close', resolve);
    });
    request.on('error', reject);
  });
  return {
    ended,
    text: () => text,
    close: () => request?.destroy(),
    /** The browser's connection is reset (a TCP RST): the server's socket is gone at once. */
    reset: () => request?.socket?.resetAndDestroy(),
    /** Resolves once what was read matches `pattern`. */
    async until(pattern: RegExp, ms = 5_000) {
      const deadline = Date.now() + ms;
      while (!pattern.test(text)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} within ${ms} ms: ${JSON.stringify(text)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** The app served on Node as the server does, on a free port; its base URL and how to stop it. */
async function onNode(app: App) {
  const server = nodeServer(app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, stop: () => new Promise((r) => server.close(r)) };
}

describe('on a Node server, each stream written to its connection', () => {
  it('tells of a message posted, and lets the stream go when its browser does', async () => {
    const node = await onNode(h.app);
    try {
      const before = h.services.live.stats().streams;
      const s = overHttp(node.base, '/c/open/events');
      await s.until(/^retry: \d+\n\n/);
      expect(h.services.live.stats().streams).toBe(before + 1);
      const id = await reply('open', 'Over a real connection');
      await s.until(new RegExp(`event: posted\ndata: \\{"message_id":${id}\\}\n\n`));
      s.close();
      await s.ended;
      await expect.poll(() => h.services.live.stats().streams).toBe(before);
    } finally {
      await node.stop();
    }
  });

  it('lets go a stream whose browser left while it was still opening', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const log = new PgLiveLog(h.db.orm.em.fork());
    // The feed answers only once the browser has gone: the stream is still catching up then.
    const slow: LiveLog = {
      now: () => log.now(),
      read: (...args) => held.then(() => log.read(...args)),
      watch: (...args) => log.watch(...args),
    };
    const { services, app } = withOwnHub({ perClient: 5, max: 5 }, slow);
    const node = await onNode(app);
    try {
      const after = present(h.services.live.position());
      await reply('open', 'Something to catch up on');
      const s = overHttp(node.base, `/c/open/events?after=${after}`);
      s.ended.catch(() => {});
      await expect.poll(() => services.live.stats().streams).toBe(1);
      s.reset();
      await new Promise((r) => setTimeout(r, 200));
      release();
      await expect.poll(() => services.live.stats().streams).toBe(0);
    } finally {
      release();
      services.live.close();
      await node.stop();
    }
  });

  it('tells each stream to come back in a moment when the server stops, and ends it', async () => {
    const { services, app } = withOwnHub({ perClient: 5, max: 5, retryMs: 750 });
    const node = await onNode(app);
    try {
      const s = overHttp(node.base, '/c/open/events');
      await s.until(/^retry: 750\n\n/);
      app.drain();
      await s.ended;
      expect(s.text()).toMatch(/^retry: 750\n\n(.|\n)*retry: 750\n\n$/);
      expect(services.live.stats().streams).toBe(0);
    } finally {
      services.live.close();
      await node.stop();
    }
  });
});

describe('the fragments a live page fetches', () => {
  it('are the page’s own items, with the page’s rule, for the embed too', async () => {
    const id = await reply('open', 'Fragment text <b>not bold</b>');
    const embed = await new Visitor(h, HOST).get(`/embeds/conversations/live/open/messages/${id}`);
    expect(embed.status).toBe(200);
    expect(embed.html).toContain('Fragment text &lt;b&gt;not bold&lt;/b&gt;');
    expect(embed.html).toContain('target="_blank"');
    expect((await new Visitor(h, HOST).get(`/c/quiet/messages/${id}`)).status).toBe(404);
    expect((await new Visitor(h, HOST).get('/c/open/messages/abc')).status).toBe(404);
    const pat = await signedIn('pat@customer.example');
    const mine = await reply('open', 'Pat can delete this', pat);
    const own = await pat.get(`/c/open/messages/${mine}`);
    expect(elements(own.html).some((e) => e.tagName === 'button' && textOf(e) === 'Delete my message')).toBe(true);
  });
});

afterAll(() => {
  for (const s of streams) s.close();
});
