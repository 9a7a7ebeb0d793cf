import {
  type ConversationListView,
  clockMicros,
  LOADED_STEP,
  lookupCriteria,
  pageWindow,
  SlugTakenError,
} from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationStore, loadSeed, PgIntakePageStore } from '../src/index.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

let db: TestDatabase;
let statements: string[] = [];
let acme: number;
let other: number;
const acmeAddress = () => ({ id: acme, host: 'https://acme.example.com', key: 'acme' });

const conv = (i: number, extra: Record<string, unknown> = {}) => ({
  title: `Conversation ${i}`,
  slug: `conv-${i}`,
  created_at: `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(6, '0')}Z`,
  ...extra,
});

beforeAll(async () => {
  db = await openTestDatabase({ onQuery: (sql) => statements.push(sql) });
  const em = db.orm.em.fork();
  const seeded = await loadSeed(em, {
    accounts: [
      {
        key: 'acme',
        name: 'Acme',
        host: 'https://acme.example.com',
        title_template: '{date} Conversation',
        defaults: { anyone_can_post: true, allow_anonymous_messages: true, allow_search_engines: true },
        owner: 'owner@acme.example',
        users: [
          { email: 'owner@acme.example', name: 'Olive Owner' },
          { email: 'sam@acme.example', name: 'Sam Support' },
        ],
        workflows: [
          {
            name: 'Triage',
            steps: [{ trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['support'] } }],
          },
        ],
        intake_pages: [
          { name: 'Main', primary: true, workflow: 'Triage' },
          { name: 'Side', primary: false },
        ],
        conversations: [
          ...Array.from({ length: 55 }, (_, i) => conv(i + 1)),
          conv(100, {
            title: 'Ärger im Büro',
            slug: 'Mixed_Case-Slug',
            created_at: '2025-06-01T12:00:00.123456Z',
            members: ['owner@acme.example', 'sam@acme.example'],
            tags: ['billing', 'Urgent'],
            intake_page: 'Main',
            messages: [
              { author: 'sam@acme.example', text: 'Hello', created_at: '2025-06-01T12:00:01Z' },
              { author: null, text: 'Anonymous hi', created_at: '2025-06-01T12:00:02Z' },
            ],
          }),
          // Two conversations with one title and one creation time: the higher id wins.
          conv(200, { title: 'Tie', slug: 'tie-a', created_at: '2020-01-01T00:00:00Z' }),
          conv(201, { title: 'Tie', slug: 'tie-b', created_at: '2020-01-01T00:00:00Z' }),
        ],
      },
      {
        key: 'other',
        name: 'Other',
        host: 'https://other.example.com',
        title_template: '{date} Conversation',
        defaults: { anyone_can_post: true, allow_anonymous_messages: true, allow_search_engines: true },
        users: [],
        workflows: [],
        intake_pages: [{ name: 'Theirs', primary: false }],
        conversations: [conv(1, { title: 'Secret', slug: 'secret', created_at: '2030-01-01T00:00:00Z' })],
      },
    ],
  });
  acme = seeded.accounts[0]?.id as number;
  other = seeded.accounts[1]?.id as number;
});

afterAll(async () => db?.close());

const store = () => conversationStore(db.orm.em.fork());

describe('get_conversation lookup', () => {
  it('returns the most recent conversation without criteria', async () => {
    expect((await store().findOne(acme, {}))?.slug).toBe('Mixed_Case-Slug');
  });
  it('matches the title exactly, ignoring case (Unicode too)', async () => {
    expect((await store().findOne(acme, lookupCriteria({ title: 'ärger IM büro' })))?.slug).toBe('Mixed_Case-Slug');
    expect((await store().findOne(acme, lookupCriteria({ title: 'conversation 7' })))?.slug).toBe('conv-7');
  });
  it('does not match a prefix or a wildcard', async () => {
    expect((await store().findOne(acme, lookupCriteria({ title: 'Conversation' })))?.slug).toBe('Mixed_Case-Slug');
    expect((await store().findOne(acme, lookupCriteria({ title: 'Conversation %' })))?.slug).toBe('Mixed_Case-Slug');
    expect((await store().findOne(acme, lookupCriteria({ slug: 'conv-_' })))?.slug).toBe('Mixed_Case-Slug');
  });
  it('matches the slug ignoring case', async () => {
    expect((await store().findOne(acme, lookupCriteria({ slug: 'CONV-3' })))?.title).toBe('Conversation 3');
  });
  it('needs both to match when both are given, else falls back to the most recent', async () => {
    expect((await store().findOne(acme, lookupCriteria({ title: 'Conversation 3', slug: 'conv-3' })))?.slug).toBe(
      'conv-3',
    );
    expect((await store().findOne(acme, lookupCriteria({ title: 'Conversation 3', slug: 'conv-4' })))?.slug).toBe(
      'Mixed_Case-Slug',
    );
  });
  it('breaks ties in creation time by id', async () => {
    expect((await store().findOne(acme, lookupCriteria({ title: 'tie' })))?.slug).toBe('tie-b');
  });
  it('never sees another account', async () => {
    expect((await store().findOne(acme, lookupCriteria({ slug: 'secret' })))?.slug).toBe('Mixed_Case-Slug');
    expect((await store().findOne(other, lookupCriteria({ slug: 'conv-3' })))?.slug).toBe('secret');
  });
  it('returns null for an account with no conversations', async () => {
    expect(await store().findOne(999_999, {})).toBeNull();
  });
  it('carries members, tags, messages, workflow and the recorded microseconds', async () => {
    const c = await store().findOne(acme, lookupCriteria({ slug: 'mixed_case-slug' }));
    expect(c?.createdAt).toBe(BigInt(Date.parse('2025-06-01T12:00:00.123Z')) * 1000n + 456n);
    expect(c?.users.map((u) => u.email)).toEqual(['owner@acme.example', 'sam@acme.example']);
    expect(c?.tags.map((t) => t.name)).toEqual(['billing', 'Urgent']);
    expect(c?.viaPrimaryIntakePage).toBe(true);
    // A loaded conversation is history: its copy's steps are kept, marked as not run here.
    expect(c?.workflow).toMatchObject({
      name: 'Triage',
      steps: [{ action: { type: 'add_tags', tags: ['support'] }, state: 'skipped', error: LOADED_STEP }],
    });
    expect(c?.messages).toMatchObject([
      { text: 'Hello', messageType: 'text', author: { anonymous: false, email: 'sam@acme.example' } },
      { text: 'Anonymous hi', author: { anonymous: true } },
    ]);
  });
});

describe('get_conversations paging', () => {
  it('returns 50 a page, newest first, and the rest on page 2', async () => {
    const listed = async (n: number) => {
      const { page, count, hasMore } = await store().listPage(acmeAddress(), pageWindow(n));
      const view: ConversationListView = JSON.parse(page.text);
      expect(view.conversations).toHaveLength(count);
      return { conversations: view.conversations, hasMore };
    };
    const first = await listed(1);
    const second = await listed(2);
    expect(first.conversations).toHaveLength(50);
    expect(second.conversations).toHaveLength(8);
    expect([first.hasMore, second.hasMore]).toEqual([true, false]);
    expect(first.conversations[0]?.slug).toBe('Mixed_Case-Slug');
    // Newest first: the ids of conversations created in order fall, but for those given times.
    const slugs = [...first.conversations, ...second.conversations].map((c) => c.slug);
    expect(new Set(slugs).size).toBe(58);
    expect(await listed(3)).toEqual({ conversations: [], hasMore: false });
  });
  it('uses one SQL statement for a page of 50 with their members, tags and messages', async () => {
    statements = [];
    await store().listPage(acmeAddress(), pageWindow(1));
    expect(statements).toHaveLength(1);
    statements = [];
    await store().findOne(acme, lookupCriteria({ title: 'x', slug: 'y' }));
    expect(statements).toHaveLength(1);
  });
});

describe('slug uniqueness', () => {
  const draft = {
    createdAt: clockMicros(),
    title: 'T',
    anyoneCanPost: true,
    allowAnonymousMessages: true,
    allowSearchEngines: true,
    viaPrimaryIntakePage: false,
    intakePageId: null,
    source: 'api' as const,
    workflow: null,
    memberIds: [],
  };
  it('is enforced by the database, ignoring case, per account', async () => {
    await expect(store().insert(acme, { ...draft, slug: 'CONV-1' })).rejects.toBeInstanceOf(SlugTakenError);
    await expect(store().insert(other, { ...draft, slug: 'conv-1' })).resolves.toMatchObject({
      id: expect.any(Number),
    });
  });
  it('stores a new conversation’s time exactly as the clock gave it, microseconds and all', async () => {
    const createdAt = clockMicros();
    await store().insert(other, { ...draft, createdAt, slug: 'timed' });
    const found = await store().findOne(other, lookupCriteria({ slug: 'timed' }));
    expect(found?.createdAt).toBe(createdAt);
  });
  it('lets exactly one of many concurrent inserts of one slug win', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => store().insert(acme, { ...draft, slug: 'race' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) {
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(SlugTakenError);
    }
  });
});

describe('intake pages', () => {
  it('are found only in their own account', async () => {
    const pages = new PgIntakePageStore(db.orm.em.fork());
    const primary = await pages.findPrimary(acme);
    expect(primary).toMatchObject({ primary: true, workflow: { name: 'Triage' } });
    expect(await pages.findPrimary(other)).toBeNull();
    const theirs = await new PgIntakePageStore(db.orm.em.fork()).findById(other, (primary?.id ?? 0) + 2);
    expect(theirs).toMatchObject({ primary: false });
    expect(await pages.findById(acme, (primary?.id ?? 0) + 2)).toBeNull();
  });
});
