import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExportOptions, exportAccounts, loadSeed, loadSeedAccounts, type TSeed } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSeedFile } from '../src/cli/seed-file.ts';
import { apiCall, auth, call, createJson, get, type Harness, openHarness, REST } from './support/harness.ts';

/*
 * An account's data goes out and comes back whole: examples/seed.json and a generated account
 * with every kind of value are loaded, exported, loaded into an empty database, and exported
 * again. The two exports must be the same text, and every answer of the API (each conversation by
 * slug, every page) the same in both databases but for ids.
 */

const GENERATED = 2_000;
let dir: string;
let source: Harness;
let restored: Harness;
const tokens = { source: new Map<string, string>(), restored: new Map<string, string>() };

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed;
  const next = () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T,
    chance: (p: number) => next() < p,
  };
}

const TITLES = [
  'Café ☕ – naïve façade',
  'Familie 👩‍👩‍👧 und Straße',
  'مرحبا بالعالم',
  'e\u0301 composed differently',
  '日本語のタイトル',
  'Ordinary title',
  'Σίσυφος',
];
const TEXTS = ['Hello', 'Line one\nline two', '¿Qué tal? 🎉', '   spaced   ', '', '<b>not html</b> & "quotes"'];

/** An account with every kind of value the API can show. */
function generatedAccount(): TSeed['accounts'][number] {
  const r = random(42);
  const users = ['Ann@Gen.example', 'bob@gen.example', 'Zoë@gen.example', 'owner@gen.example', 'eve@gen.example'].map(
    (email, i) => ({ email, name: `User ${i} ✓`, ...(email.startsWith('owner@') ? { team: 'owner' as const } : {}) }),
  );
  const tags = ['Ünïcode', 'billing', 'SUPPORT', 'tag with spaces', '日本語'];
  const pages = ['Contact', 'Feedback', 2, 3, 4] as const;
  const start = Date.UTC(2021, 2, 4, 5, 6, 7);
  const time = (ms: number, micros: number) =>
    new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
  const conversations = Array.from({ length: GENERATED }, (_, i) => {
    // Every tenth conversation shares its creation time with the one before: ids break the tie.
    const at = start + (i - (i % 10 === 9 ? 1 : 0)) * 1_500;
    const micros = i % 10 === 9 ? (i - 1) % 1000 : i % 1000;
    const members = r.chance(0.2) ? undefined : users.filter(() => r.chance(0.4)).map((u) => u.email);
    return {
      ...(r.chance(0.8) ? { title: `${r.pick(TITLES)} ${i}` } : {}),
      ...(r.chance(0.7) ? { slug: `gen-${i}-${r.pick(['a', 'B', 'x_y'])}` } : {}),
      ...(r.chance(0.5) ? { anyone_can_post: r.chance(0.5) } : {}),
      ...(r.chance(0.5) ? { allow_anonymous_messages: r.chance(0.5) } : {}),
      ...(r.chance(0.5) ? { allow_search_engines: r.chance(0.5) } : {}),
      ...(r.chance(0.6) ? { intake_page: r.pick(pages) } : {}),
      created_at: time(at, micros),
      ...(members ? { members } : {}),
      tags: tags.filter(() => r.chance(0.3)),
      messages: Array.from({ length: r.int(5) }, (_, m) => ({
        author: r.chance(0.3) ? null : r.pick(users).email,
        text: `${r.pick(TEXTS)} ${m}`,
        ...(r.chance(0.2)
          ? {
              type: 'audio' as const,
              recorded_duration_seconds: r.int(600),
              download_media_url: `https://media.example/${i}/${m}.mp3`,
            }
          : {}),
        // Two messages of a conversation may share a time, too.
        created_at: time(at + 1000 + (m === 2 ? 1 : m) * 10, r.int(1000)),
        // Every seventh begins with a recording whose second message answers a moment of it.
        ...(i % 7 === 3 && m === 0
          ? {
              type: 'audio' as const,
              recorded_duration_seconds: 60,
              download_media_url: `https://media.example/${i}/moment.mp3`,
            }
          : {}),
        ...(i % 7 === 3 && m === 1 ? { thread_of: 1, at_seconds: 7 + (i % 50) } : {}),
        // Every fifth's first message has reactions: a person's two kinds and a visitor's.
        ...(i % 5 === 2 && m === 0
          ? {
              reactions: [
                { reaction: 'heart' as const, user: users[i % users.length]?.email ?? null },
                { reaction: 'heart' as const, user: null },
                { reaction: 'thinking' as const, user: users[i % users.length]?.email ?? null },
              ],
            }
          : {}),
      })),
    };
  });
  return {
    key: 'generated',
    name: 'Generated — every value',
    host: 'https://generated.example.com',
    title_template: 'Conversation of {date} at {time}',
    defaults: { anyone_can_post: false, allow_anonymous_messages: false, allow_search_engines: false },
    rate_limit: 0, // no limit: the test reads every conversation twice
    // The owner is not the first user: ids follow the file, not the owner.
    owner: 'owner@gen.example',
    users,
    tags,
    workflows: [
      {
        name: 'Triage',
        steps: [
          { trigger: { type: 'conversation.created' }, action: { type: 'add_members', emails: ['bob@gen.example'] } },
        ],
      },
      {
        name: 'Same name',
        steps: [
          { trigger: { type: 'message.created', by: 'participant' }, action: { type: 'add_tags', tags: ['billing'] } },
        ],
      },
      // Disabled, and saved before steps had a form: kept as it is, applied to nothing new.
      { name: 'Same name', steps: [{ action: 'assign' }], disabled: true },
    ],
    intake_pages: [
      {
        name: 'Contact',
        primary: true,
        workflow: 'Triage',
        key: 'talk-to-us',
        title: 'Talk to us ✓',
        welcome_text: 'Type it or record it.',
        team: ['owner@gen.example'],
      },
      { name: 'Feedback', allow_anonymous: true, disabled: true },
      { name: 'Twin', workflow: 2 },
      { name: 'Twin', workflow: 3 },
    ],
    message_templates: [
      { name: 'Welcome ✓', text: 'Hello,\nand welcome.', creator: 'owner@gen.example' },
      { name: 'Rich', text: '<p>Rich <i>text</i></p>', format: 'html' },
    ],
    conversations,
  };
}

async function exportText(h: Harness, options: ExportOptions = {}): Promise<string> {
  let text = '';
  for await (const piece of exportAccounts(h.db.orm.em.fork(), 'all', options)) text += piece;
  return text;
}

async function loadFile(h: Harness, file: string, into: Map<string, string>) {
  const loaded = await loadSeedAccounts(h.db.orm.em.fork(), readSeedFile(file));
  for (const a of loaded.accounts) into.set(a.key, a.tokens[0]?.token as string);
  return loaded.counts;
}

/** An answer with every id replaced, so that two databases' answers compare. */
function withoutIds(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutIds(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutIds(v, k)]));
  }
  if (['id', 'conversation_id', 'intake_page_id', 'parent_message_id'].includes(key) && typeof value === 'number') {
    return '#';
  }
  if (key === 'message_url') return String(value).replace(/#message-\d+$/, '#message-#');
  if (key === 'embed_message_url') return String(value).replace(/\/\d+&/, '/#&');
  return value;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convo-export-'));
  source = await openHarness();
  restored = await openHarness();
  const example = JSON.parse(await readFile(new URL('../../../examples/seed.json', import.meta.url), 'utf8')) as TSeed;
  const loaded = await loadSeed(source.db.orm.em.fork(), { accounts: [...example.accounts, generatedAccount()] });
  for (const a of loaded.accounts) tokens.source.set(a.key, a.tokens[0]?.token as string);
  // A few made through the API too: through the primary page, a secondary page, and none.
  const token = tokens.source.get('generated') as string;
  for (const body of [{ primary_intake_page: true }, { title: 'Via the API' }, { slug: 'api-made' }]) {
    const made = await createJson(source, token, body);
    expect(made.status).toBe(201);
    // A message kept as HTML goes out and comes back as HTML.
    if (body.slug === 'api-made') {
      const posted = await apiCall(source, 'POST', '/messages/create_message', auth(token), {
        conversation_id: made.body.id,
        text: '<p>Kept <b>as HTML</b>: https://example.com/x</p>',
      });
      // One made from a template keeps the template's name.
      const templates = await apiCall(source, 'GET', '/message_templates', auth(token));
      const fromTemplate = await apiCall(source, 'POST', '/messages/create_message', auth(token), {
        conversation_id: made.body.id,
        message_template_id: templates.body.message_templates[0].id,
      });
      expect(fromTemplate.body.message_template.name).toBe('Rich');
      expect(posted.status).toBe(201);
      // A thread reply keeps its thread.
      const reply = await apiCall(source, 'POST', '/messages/create_message', auth(token), {
        conversation_id: made.body.id,
        text: 'In its thread',
        parent_message_id: posted.body.id,
      });
      expect(reply.status).toBe(201);
    }
  }
}, 120_000);

afterAll(async () => {
  await source?.close();
  await restored?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('export, and loading an export back', () => {
  let first: string;

  it('loads its own export into an empty database, and exports that to the same text', async () => {
    first = await exportText(source);
    const file = join(dir, 'first.json');
    await writeFile(file, first);
    const counts = await loadFile(restored, file, tokens.restored);
    expect(counts).toMatchObject({ accounts: 2, conversations: 3 + GENERATED + 3 });
    const second = await exportText(restored);
    expect(second.length).toBe(first.length);
    expect(second === first).toBe(true);
    expect(first).toContain('"format":"html"');
    // A reply at a moment of its thread's recording keeps both.
    expect(first).toContain('"thread_of":1,"at_seconds":10');
    // Reactions come back, a person's by their address and a visitor's as a count.
    expect(first).toMatch(/"reactions":\[\{"reaction":"heart","user":"[^"]+"\},\{"reaction":"heart","user":null\}/);
    // It is the seed format, one conversation a line, with what it leaves out said.
    const parsed = JSON.parse(first) as { comment: string; accounts: { tokens?: unknown; conversations: unknown[] }[] };
    expect(parsed.comment).toMatch(/Not included: API tokens, webhook endpoints and their signing secrets/);
    expect(parsed.accounts.every((a) => a.tokens === undefined)).toBe(true);
    expect(first.split('\n').length).toBeGreaterThan(GENERATED);
  }, 120_000);

  it('answers every conversation by slug, and every page, the same in both databases but for ids', async () => {
    for (const key of ['demo', 'generated']) {
      const [a, b] = [tokens.source.get(key) as string, tokens.restored.get(key) as string];
      const slugs: string[] = [];
      for (let page = 1; ; page++) {
        const [x, y] = [
          await get(source, a, `get_conversations?page=${page}`),
          await get(restored, b, `get_conversations?page=${page}`),
        ];
        expect(y.status).toBe(x.status);
        if (x.status === 404) break;
        expect(x.status).toBe(200);
        expect(withoutIds(y.body)).toEqual(withoutIds(x.body));
        slugs.push(...x.body.conversations.map((c: { slug: string }) => c.slug));
      }
      expect(slugs.length).toBe(key === 'demo' ? 3 : GENERATED + 3);
      for (const slug of slugs) {
        const path = `get_conversation?slug=${encodeURIComponent(slug)}`;
        const [x, y] = [await get(source, a, path), await get(restored, b, path)];
        expect(x.status).toBe(200);
        expect(withoutIds(y.body)).toEqual(withoutIds(x.body));
      }
      // The template library and the messages made from one, as the messages resource shows them.
      for (const path of ['/message_templates', '/messages/get_messages?conversation_slug=api-made']) {
        const [x, y] = [await apiCall(source, 'GET', path, auth(a)), await apiCall(restored, 'GET', path, auth(b))];
        expect(y.status).toBe(x.status);
        const times = (body: unknown) =>
          JSON.parse(JSON.stringify(withoutIds(body)).replace(/"(created|updated)_at":"[^"]+"/g, '"$1_at":"T"'));
        expect(times(y.body)).toEqual(times(x.body));
      }
    }
    // The restored reply is under the restored message it answered.
    const listed = await apiCall(
      restored,
      'GET',
      '/messages/get_messages?conversation_slug=api-made',
      auth(tokens.restored.get('generated') as string),
    );
    const messages = listed.body.messages as { id: number; text: string; parent_message_id: number | null }[];
    const reply = messages.find((m) => m.text === 'In its thread');
    expect(reply?.parent_message_id).toBe(messages.find((m) => m.text.startsWith('<p>Kept'))?.id);
  }, 240_000);

  it('exports only what was created after --since, and the increment loads on its own', async () => {
    const since = '2021-03-04T05:56:00Z';
    const increment = JSON.parse(await exportText(source, { since })) as {
      accounts: { key: string; conversations: { created_at: string }[] }[];
    };
    const generated = increment.accounts.find((a) => a.key === 'generated');
    const all = JSON.parse(first) as typeof increment;
    const expected = all.accounts
      .flatMap((a) => a.conversations)
      .filter((c) => c.created_at > '2021-03-04T05:56:00.000000Z');
    expect(increment.accounts.flatMap((a) => a.conversations)).toEqual(expected);
    expect(generated?.conversations.length).toBeGreaterThan(0);
    expect(generated?.conversations.length).toBeLessThan(GENERATED);
  });

  it('refuses an unknown account and a --since that is no time, with a clear message', async () => {
    const drain = async (accounts: string[], options: ExportOptions = {}) => {
      for await (const _ of exportAccounts(source.db.orm.em.fork(), accounts, options));
    };
    await expect(drain(['nobody'])).rejects.toThrow(/no account with key "nobody"/);
    await expect(drain(['demo'], { since: 'yesterday' })).rejects.toThrow(/--since: not a time/);
    // The other account's token sees nothing of the export's work: it changed nothing.
    const r = await call(
      source,
      new Request(`${REST}/get_conversations?page=1`, { headers: auth(tokens.source.get('demo') as string) }),
    );
    expect(r.body.conversations.length).toBe(3);
  });
});
