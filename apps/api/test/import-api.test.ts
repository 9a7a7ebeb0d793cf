import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findAccount, issueToken, loadSeed, type TSeed } from '@convo/db';
import { DEFAULT_MEDIA_LIMITS } from '@convo/domain';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ImportOptions, importFromApi } from '../src/cli/import-api.ts';
import { DiskMediaStore } from '../src/media/disk-store.ts';
import { MediabunnyProbe } from '../src/media/probe.ts';
import { createJson, get, type Harness, openHarness } from './support/harness.ts';

/*
 * import-api against a second instance of this server, over real HTTP (the API is the same as the
 * original service's): every conversation comes across, an interrupted import resumes without
 * doubles, the source's 503s are waited out, and the request rate stays under --rate.
 */

const COUNT = 130;
let dir: string;
let source: Harness;
let target: Harness;
let sourceToken: string;
let baseUrl: string;
let requests = 0;
let failEvery = 0;
let close: () => void;

function account(): TSeed['accounts'][number] {
  const users = ['first@src.example', 'Second@src.example', 'third@src.example'].map((email, i) => ({
    email,
    name: `Person ${i} ✓`,
  }));
  return {
    key: 'src',
    name: 'Source',
    host: 'https://src.example.com',
    owner: 'first@src.example',
    users,
    workflows: [
      {
        name: 'Triage',
        steps: [
          { trigger: { type: 'conversation.created' }, action: { type: 'add_members', emails: ['third@src.example'] } },
        ],
      },
    ],
    intake_pages: [
      { name: 'Main', primary: true, workflow: 'Triage' },
      { name: 'Side', primary: false },
    ],
    conversations: Array.from({ length: COUNT }, (_, i) => ({
      title: `${['Café ☕', 'مرحبا', 'Plain'][i % 3]} ${i}`,
      slug: `conv-${i}`,
      anyone_can_post: i % 4 !== 0,
      allow_anonymous_messages: i % 3 !== 0,
      allow_search_engines: i % 5 !== 0,
      ...(i % 7 === 0 ? { intake_page: 'Main' } : i % 7 === 1 ? { intake_page: 'Side' } : {}),
      created_at: new Date(Date.UTC(2022, 0, 1) + i * 60_000)
        .toISOString()
        .replace('Z', `${String(i).padStart(3, '0')}Z`),
      members: users.filter((_, u) => (i + u) % 2 === 0).map((u) => u.email),
      tags: i % 2 === 0 ? ['even', 'Ünïcode'] : ['odd'],
      messages: Array.from({ length: i % 4 }, (_, m) => ({
        author: m === 1 ? null : (users[(i + m) % 3]?.email as string),
        text: `message ${m} of ${i}\nsecond line`,
        ...(m === 2
          ? { type: 'audio', recorded_duration_seconds: 42, download_media_url: 'https://m.example/a.mp3' }
          : {}),
        created_at: new Date(Date.UTC(2022, 0, 1) + i * 60_000 + (m + 1) * 1000).toISOString(),
      })),
    })),
  };
}

/** A conversation as the API shows it, but for ids, with users and tags in a fixed order. */
function comparable(c: Record<string, unknown>): unknown {
  const strip = (v: unknown, key = ''): unknown => {
    if (Array.isArray(v)) return v.map((x) => strip(x));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, strip(x, k)]));
    if (['id', 'conversation_id', 'intake_page_id'].includes(key) && typeof v === 'number') return '#';
    if (key === 'message_url') return String(v).replace(/#message-\d+$/, '');
    if (key === 'embed_message_url') return String(v).replace(/\/\d+&/, '/#&');
    return v;
  };
  const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
  const s = strip(c) as Record<string, unknown[]>;
  return { ...s, users: [...(s.users ?? [])].sort(byText), tags: [...(s.tags ?? [])].sort(byText) };
}

const options = (o: Partial<ImportOptions> = {}): ImportOptions => ({
  from: baseUrl,
  token: sourceToken,
  account: 'src',
  rate: 1000,
  stateFile: join(dir, 'state.json'),
  ...o,
});

const localCount = async () =>
  Number(
    (
      await target.db.orm.em
        .fork()
        .getConnection()
        .execute(
          `select count(*)::int as n from conversation c join account a on a.id = c.account_id where a.key = 'src'`,
        )
    )[0].n,
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convo-import-'));
  source = await openHarness();
  target = await openHarness();
  const loaded = await loadSeed(source.db.orm.em.fork(), { accounts: [account()] });
  sourceToken = loaded.accounts[0]?.tokens[0]?.token as string;
  const server = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req: Request) => {
      requests += 1;
      if (failEvery > 0 && requests % failEvery === 0) {
        return new Response('{"error":"busy"}', { status: 503, headers: { 'retry-after': '1' } });
      }
      return source.app.fetch(req);
    },
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
}, 60_000);

afterAll(async () => {
  close?.();
  await source?.close();
  await target?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('import-api', () => {
  it('stops when interrupted, and a second run takes up where it stopped, with no conversation twice', async () => {
    const stop = new AbortController();
    await expect(
      importFromApi(target.db.orm.em.fork(), options({ signal: stop.signal, onProgress: () => stop.abort() })),
    ).rejects.toThrow();
    expect(await localCount()).toBe(50);
    expect(JSON.parse(await readFile(join(dir, 'state.json'), 'utf8'))).toMatchObject({ page: 2 });

    // Meanwhile the source gets new conversations: the pages move by three.
    for (const slug of ['late-1', 'late-2', 'late-3']) {
      expect((await createJson(source, sourceToken, { slug, title: `Late ${slug}` })).status).toBe(201);
    }
    failEvery = 25;
    const report = await importFromApi(target.db.orm.em.fork(), options());
    failEvery = 0;
    expect(report.refused).toEqual([]);
    // The new ones are on page 1, which the state file says is done: a third run finds them.
    const last = await importFromApi(target.db.orm.em.fork(), options());
    expect(report.conversations + last.conversations).toBe(COUNT - 50 + 3);
    expect(await localCount()).toBe(COUNT + 3);
    await expect(readFile(join(dir, 'state.json'), 'utf8')).rejects.toThrow();
  }, 120_000);

  it('brings every conversation across as the API shows it, but for ids and message times', async () => {
    // The account it made has no API token until an operator issues one.
    const [tokens] = await target.db.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from api_token t join account a on a.id = t.account_id where a.key = 'src'`);
    expect(tokens.n).toBe(0);
    const local = (
      await issueToken(target.db.orm.em.fork(), (await findAccount(target.db.orm.em.fork(), 'src')).id, 'test')
    ).token;
    for (let i = 0; i < COUNT; i++) {
      const path = `get_conversation?slug=conv-${i}`;
      const [x, y] = [await get(source, sourceToken, path), await get(target, local, path)];
      expect(y.status).toBe(200);
      expect(comparable(y.body)).toEqual(comparable(x.body));
    }
    // The account took its host from the source's conversation URLs.
    const late = await get(target, local, 'get_conversation?slug=late-2');
    expect(late.body.conversation_url).toBe('https://src.example.com/c/late-2');
  }, 120_000);

  it('keeps under --rate requests a second', async () => {
    const before = requests;
    const started = performance.now();
    const report = await importFromApi(
      target.db.orm.em.fork(),
      options({ account: 'slow', host: 'https://slow.example.com', rate: 50, stateFile: null }),
    );
    const seconds = (performance.now() - started) / 1000;
    expect(report.requests).toBe(requests - before);
    expect(report.requests).toBeGreaterThan(COUNT);
    expect(seconds).toBeGreaterThanOrEqual((report.requests - 1) / 50 - 0.05);
  }, 120_000);

  it('says plainly when the token is refused or the source is no such server', async () => {
    await expect(
      importFromApi(target.db.orm.em.fork(), options({ token: 'cnv_wrong_token_0000000000000000' })),
    ).rejects.toThrow(/refused the token/);
    await expect(importFromApi(target.db.orm.em.fork(), options({ from: 'ftp://x' }))).rejects.toThrow(/http/);
  });
  it('follows redirects within the source, and refuses one to another origin without sending it the token', async () => {
    const seen: (string | undefined)[] = [];
    const elsewhere = serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req: Request) => {
        seen.push(req.headers.get('authorization') ?? undefined);
        return new Response('{}', { headers: { 'content-type': 'application/json' } });
      },
    });
    await new Promise<void>((resolve) => elsewhere.once('listening', () => resolve()));
    const elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    const redirecting = serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: (req: Request) => {
        const url = new URL(req.url);
        if (url.pathname.startsWith('/moved/')) {
          return source.app.fetch(new Request(`${baseUrl}${url.pathname.slice('/moved'.length)}${url.search}`, req));
        }
        if (url.pathname.startsWith('/away/')) return Response.redirect(`${elsewhereUrl}/steal`, 302);
        return Response.redirect(`${url.origin}/moved${url.pathname}${url.search}`, 301);
      },
    });
    await new Promise<void>((resolve) => redirecting.once('listening', () => resolve()));
    const redirectingUrl = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
    try {
      const refused = importFromApi(
        target.db.orm.em.fork(),
        options({
          from: `${redirectingUrl}/away`,
          account: 'redirected',
          host: 'https://redirected.example.com',
          stateFile: join(dir, 'away.json'),
        }),
      );
      await expect(refused).rejects.toThrow(/redirected to another origin/);
      expect(seen).toEqual([]);
      const followed = await importFromApi(
        target.db.orm.em.fork(),
        options({
          from: redirectingUrl,
          account: 'followed',
          host: 'https://followed.example.com',
          stateFile: join(dir, 'followed.json'),
        }),
      );
      expect(followed.conversations).toBeGreaterThanOrEqual(COUNT);
    } finally {
      elsewhere.close();
      redirecting.close();
    }
  });

  it("copies the source's recordings into this server's media store, measured again, byte for byte", async () => {
    // An account whose host is the test server itself, so its download_media_url can be fetched.
    const loaded = await loadSeed(source.db.orm.em.fork(), {
      accounts: [
        {
          key: 'msrc',
          name: 'Media source',
          host: baseUrl,
          conversations: [{ slug: 'with-recording', messages: [{ text: 'first' }] }],
        },
      ],
    });
    const token = loaded.accounts[0]?.tokens[0]?.token as string;
    const [row] = await source.db.orm.em
      .fork()
      .getConnection()
      .execute(`select c.id, c.account_id from conversation c where c.slug = 'with-recording'`);
    const bytes = await readFile(new URL('./fixtures/media/audio-3s.ogg', import.meta.url));
    const key = `${row.account_id}/${'cd'.repeat(16)}`;
    await source.services.media.store.put(key, [bytes], 1e9);
    await source.services.replies.insert(row.account_id, row.id, {
      authorId: null,
      text: 'listen',
      submitKey: null,
      media: { key, kind: 'audio', contentType: 'audio/ogg', bytes: bytes.byteLength, seconds: 3 },
    });

    const mediaDir = join(dir, 'copied-media');
    const media = { store: new DiskMediaStore(mediaDir), probe: new MediabunnyProbe(), limits: DEFAULT_MEDIA_LIMITS };
    const report = await importFromApi(
      target.db.orm.em.fork(),
      options({ account: 'mdst', token, host: 'https://mdst.example.com', stateFile: null, media }),
    );
    expect(report).toMatchObject({ conversations: 1, recordings: 1 });
    const [copied] = await target.db.orm.em
      .fork()
      .getConnection()
      .execute(
        `select m.id, m.message_type, m.recorded_duration_seconds, m.media_key, m.download_media_url
         from message m join account a on a.id = m.account_id where a.key = 'mdst' and m.media_key is not null`,
      );
    expect(copied).toMatchObject({ message_type: 'audio', recorded_duration_seconds: 3, download_media_url: null });
    expect(await readFile(join(mediaDir, copied.media_key))).toEqual(bytes);
  });
});
