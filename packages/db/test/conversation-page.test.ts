import {
  type ConversationListView,
  type ConversationRecord,
  conversationView,
  listedConversationView,
  lookupCriteria,
  pageWindow,
} from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationStore, loadSeed } from '../src/index.ts';
import { query } from '../src/repositories/sql.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * get_conversations answers a page as JSON that PostgreSQL writes (conversation-reads.ts), while
 * get_conversation and create answer the domain's views of records. Both are the same wire shape:
 * this holds the page's JSON equal, on every field and in order, to the domain's view of each of
 * its conversations, over rows that try every branch of the view and every escape of JSON.
 */

let db: TestDatabase;
const ACME = { key: 'acme', host: 'http://acme.example.com:8080' };
let account: { id: number; host: string; key: string };

/** Text that JSON must escape, and text it must not mangle. */
const AWKWARD = [
  'quotes " and \\ backslashes',
  'control \u0001\u001f, tab\t, new\nline, return\r',
  'emoji 🎙️ and 𝄞 outside the BMP',
  'line\u2028and paragraph\u2029separators',
  'html <script>alert("x")</script> &amp;',
  '',
];

const createdAt = (n: number) =>
  `2025-03-${String(1 + (n % 31)).padStart(2, '0')}T${String([0, 11, 12, 13, 23][n % 5]).padStart(2, '0')}:0${n % 10}:07.${String((n * 7919) % 1_000_000).padStart(6, '0')}Z`;

const conversations = Array.from({ length: 57 }, (_, i) => {
  const awkward = AWKWARD[i % AWKWARD.length] ?? '';
  return {
    title: `${awkward} ${i}`.slice(0, 200),
    slug: `page-${i}`,
    anyone_can_post: i % 2 === 0,
    allow_anonymous_messages: i % 3 === 0,
    allow_search_engines: i % 5 === 0,
    // Each pair shares one creation time (the higher id comes first); the times try every day's
    // ordinal (1st, 2nd, 3rd, 11th … 31st) and the clock's edges (midnight, noon).
    created_at: createdAt(Math.floor(i / 2)),
    members: i % 4 === 0 ? [] : ['olivia@acme.example', ...(i % 2 ? ['sam@acme.example'] : [])],
    tags: i % 3 === 0 ? [] : ['billing', `t${i % 5}`],
    ...(i % 7 === 0 ? { intake_page: 'Front' } : {}),
    ...(i % 6 === 0 ? { workflow: null } : {}),
    messages:
      i % 9 === 0
        ? []
        : [
            { author: 'olivia@acme.example', text: awkward, created_at: '2025-04-01T00:00:00Z' },
            { author: null, text: `anonymous ${awkward}`, created_at: '2025-04-01T00:00:01Z' },
            {
              author: 'nameless@acme.example',
              type: 'video' as const,
              recorded_duration_seconds: 12,
              text: '',
              download_media_url: i % 2 ? 'https://cdn.example.com/v.webm?a=1&b="2"' : null,
              created_at: '2025-04-01T00:00:02Z',
            },
            {
              author: 'sam@acme.example',
              text: 'hidden from the API',
              hidden: true,
              created_at: '2025-04-01T00:00:03Z',
            },
          ],
  };
});

beforeAll(async () => {
  db = await openTestDatabase();
  const em = db.orm.em.fork();
  const seeded = await loadSeed(em, {
    accounts: [
      {
        key: ACME.key,
        name: 'Acme',
        host: ACME.host,
        owner: 'olivia@acme.example',
        users: [
          { email: 'olivia@acme.example', name: 'Olivia "O" Owner' },
          { email: 'sam@acme.example', name: 'Sam\\Support' },
          { email: 'nameless@acme.example', name: 'Ünïcode 名前' },
        ],
        workflows: [
          {
            name: 'Welcome',
            steps: [{ trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['new'] } }],
          },
        ],
        intake_pages: [{ name: 'Front', key: 'front', primary: false, workflow: 'Welcome' }],
        conversations,
      },
    ],
  });
  const id = seeded.accounts[0]?.id;
  if (id === undefined) throw new Error('the seed made no account');
  account = { id, ...ACME };
  // A recording the server keeps: its download URL is the account's own.
  await query(
    em,
    `update message set media_key = '${id}/0123456789abcdef0123456789abcdef', media_content_type = 'video/webm', media_bytes = 1000
     where account_id = ? and message_type = 'video' and download_media_url is null`,
    [id],
  );
}, 120_000);
afterAll(async () => db?.close());

const store = () => conversationStore(db.orm.em.fork());

/** The account's conversations, newest first, as the domain's records. */
async function allRecords(): Promise<ConversationRecord[]> {
  const rows = await query<{ slug: string }>(
    db.orm.em.fork(),
    'select slug from conversation where account_id = ? order by created_at desc, id desc',
    [account.id],
  );
  const records: ConversationRecord[] = [];
  for (const { slug } of rows) {
    const record = await store().findOne(account.id, lookupCriteria({ slug }));
    if (!record) throw new Error(`no conversation ${slug}`);
    records.push(record);
  }
  return records;
}

describe("a page's JSON written by PostgreSQL", () => {
  it("is the domain's view of each conversation on it, field for field and in order", async () => {
    const records = await allRecords();
    expect(records).toHaveLength(57);
    const listed: unknown[] = [];
    for (const n of [1, 2]) {
      const { page, count, hasMore } = await store().listPage(account, pageWindow(n));
      const view: ConversationListView = JSON.parse(page.text);
      expect(Object.keys(view)).toEqual(['conversations']);
      expect(view.conversations).toHaveLength(count);
      expect(hasMore).toBe(n === 1);
      listed.push(...view.conversations);
    }
    const expected = records.map((r) => JSON.parse(JSON.stringify(listedConversationView(account, r))));
    expect(listed).toHaveLength(expected.length);
    for (const [i, want] of expected.entries()) {
      // Each conversation alone, so a difference names the one that differs.
      expect(listed[i], `conversation ${i} (${want.slug})`).toEqual(want);
      // The same members in the same order, as a client walking the JSON would meet them.
      expect(Object.keys(listed[i] ?? {})).toEqual(Object.keys(want));
    }
  });

  it('tries what it claims to: every branch of the view is on the pages', async () => {
    const { page } = await store().listPage(account, pageWindow(1));
    const view: ConversationListView = JSON.parse(page.text);
    const messages = view.conversations.flatMap((c) => c.messages);
    expect(messages.some((m) => m.author.anonymous)).toBe(true);
    expect(messages.some((m) => !m.author.anonymous && m.author.name === 'Ünïcode 名前')).toBe(true);
    expect(messages.some((m) => m.download_media_url?.startsWith(`${ACME.host}/media/acme/`))).toBe(true);
    expect(messages.some((m) => m.download_media_url?.startsWith('https://cdn.example.com/'))).toBe(true);
    expect(messages.some((m) => m.text.includes('hidden'))).toBe(false);
    expect(view.conversations.some((c) => 'id' in c.workflow)).toBe(true);
    expect(view.conversations.some((c) => !('id' in c.workflow))).toBe(true);
    expect(view.conversations.some((c) => c.intake_page_id !== null)).toBe(true);
    expect(view.conversations.some((c) => c.title.includes('\u2028'))).toBe(true);
  });

  it("answers get_conversation with the domain's view of the conversation, its times included", async () => {
    const records = await allRecords();
    for (const record of records) {
      const found = await store().findOneView(account, lookupCriteria({ slug: record.slug }));
      const want = JSON.parse(JSON.stringify(conversationView(account, record)));
      const got = JSON.parse(found?.view.text ?? 'null');
      expect(got, record.slug).toEqual(want);
      expect(Object.keys(got)).toEqual(Object.keys(want));
      expect([found?.title, found?.slug]).toEqual([record.title, record.slug]);
    }
    // The times as the spec writes them, on a clock's edges.
    const nice = records.map((r) => conversationView(account, r).conversation_credated_time_nice);
    expect(nice).toContain('March 1st, 2025 12:00AM UTC');
    expect(nice).toContain('March 3rd, 2025 12:02PM UTC');
    expect(nice).toContain('March 22nd, 2025 11:01AM UTC');
    expect(nice.some((t) => /^March 1[123]th, /.test(t))).toBe(true);
  });

  it('is an empty page past the last one', async () => {
    const { page, count, hasMore } = await store().listPage(account, pageWindow(3));
    expect([JSON.parse(page.text), count, hasMore]).toEqual([{ conversations: [] }, 0, false]);
  });
});
