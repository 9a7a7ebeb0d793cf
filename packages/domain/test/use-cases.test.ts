import { describe, expect, it } from 'vitest';
import {
  type AccountContext,
  type ConversationListView,
  type ConversationRecord,
  type ConversationStore,
  type ConversationView,
  conversationView,
  createConversation,
  DomainError,
  type EpochMicros,
  formatCreatedTime,
  type GuardedInsert,
  getConversation,
  getConversations,
  type IdempotencyGuard,
  type IntakePageRecord,
  type IntakePageStore,
  type LookupCriteria,
  listedConversationView,
  type NewConversation,
  type PageWindow,
  SlugTakenError,
  type StoredConversation,
  slugKey,
  titleKey,
} from '../src/index.ts';

/*
 * The use cases against in-memory implementations of their ports: the rules themselves, with no
 * database in the way. The stores keep the ports' contracts (per-account scope, slug uniqueness
 * ignoring case, newest first with ties to the higher id), nothing more.
 */

class MemoryConversations implements ConversationStore {
  readonly rows: (NewConversation & { id: number; accountId: number })[] = [];
  /** Slugs an insert finds taken by someone else in the meantime (a lost race), once each. */
  readonly raced = new Set<string>();
  private readonly keys = new Map<string, { request: string; answer: unknown }>();

  private record(r: NewConversation & { id: number }): ConversationRecord {
    return { ...r, createdAt: r.createdAt, users: [], tags: [], messages: [] };
  }

  private newestFirst(accountId: number) {
    return this.rows
      .filter((r) => r.accountId === accountId)
      .sort((a, b) => (a.createdAt === b.createdAt ? b.id - a.id : a.createdAt > b.createdAt ? -1 : 1));
  }

  async findOne(accountId: number, c: LookupCriteria): Promise<ConversationRecord | null> {
    const rows = this.newestFirst(accountId);
    const match = rows.find(
      (r) =>
        (c.titleKey === undefined || titleKey(r.title) === c.titleKey) &&
        (c.slugKey === undefined || slugKey(r.slug) === c.slugKey),
    );
    const found = (c.titleKey !== undefined || c.slugKey !== undefined ? match : undefined) ?? rows[0];
    return found ? this.record(found) : null;
  }

  async findOneView(account: AccountContext, c: LookupCriteria) {
    const record = await this.findOne(account.id, c);
    return record && { view: { text: JSON.stringify(conversationView(account, record)) }, ...record };
  }

  async listPage(account: AccountContext, w: PageWindow) {
    const rows = this.newestFirst(account.id);
    const records = rows.slice(w.offset, w.offset + w.limit).map((r) => this.record(r));
    return {
      page: { text: JSON.stringify({ conversations: records.map((r) => listedConversationView(account, r)) }) },
      count: records.length,
      hasMore: rows.length > w.offset + w.limit,
    };
  }

  async insert(accountId: number, c: NewConversation): Promise<StoredConversation> {
    if (this.raced.delete(c.slug)) throw new SlugTakenError();
    if (this.rows.some((r) => r.accountId === accountId && slugKey(r.slug) === slugKey(c.slug))) {
      throw new SlugTakenError();
    }
    const id = this.rows.length + 1;
    this.rows.push({ ...c, id, accountId });
    return { id };
  }

  async insertOnce(accountId: number, c: NewConversation, once: IdempotencyGuard): Promise<GuardedInsert> {
    const used = this.keys.get(`${accountId}:${once.key}`);
    if (used) return used.request === once.request ? { kind: 'replay', answer: used.answer } : { kind: 'key_reused' };
    const stored = await this.insert(accountId, c);
    this.keys.set(`${accountId}:${once.key}`, { request: once.request, answer: once.answer(stored) });
    return { kind: 'stored', stored };
  }
}

class MemoryIntakePages implements IntakePageStore {
  private readonly pages: (IntakePageRecord & { accountId: number })[];
  constructor(pages: (IntakePageRecord & { accountId: number })[]) {
    this.pages = pages;
  }
  async findById(accountId: number, id: number) {
    return this.pages.find((p) => p.accountId === accountId && p.id === id) ?? null;
  }
  async findPrimary(accountId: number) {
    return this.pages.find((p) => p.accountId === accountId && p.primary) ?? null;
  }
}

const owner = { id: 7, email: 'o@acme.example', name: 'Olive' };
const acme: AccountContext = {
  id: 1,
  key: 'acme',
  name: 'Acme',
  host: 'https://acme.example',
  titleTemplate: '{date} Conversation',
  defaults: { anyoneCanPost: false, allowAnonymousMessages: true, allowSearchEngines: false },
  owner,
};
const other: AccountContext = { ...acme, id: 2, key: 'other', host: 'https://other.example' };
const workflow = {
  id: 3,
  name: 'Triage',
  steps: [
    {
      trigger: { type: 'conversation.created' as const, delay_seconds: 60 },
      action: { type: 'add_tags' as const, tags: ['support'] },
    },
  ],
};

function setup(clock?: () => EpochMicros) {
  const conversations = new MemoryConversations();
  const intakePages = new MemoryIntakePages([
    { accountId: 1, id: 10, primary: true, workflow },
    { accountId: 1, id: 11, primary: false, workflow: null },
    { accountId: 2, id: 20, primary: false, workflow: null },
  ]);
  return { conversations, deps: { conversations, intakePages, ...(clock ? { clock } : {}) } };
}

const at = (iso: string, micros = 0) => BigInt(Date.parse(iso)) * 1000n + BigInt(micros);

describe('createConversation', () => {
  it('fills what is omitted from the account: defaults, owner as member, template title, a random slug', async () => {
    const { conversations, deps } = setup(() => at('2026-02-01T17:21:09Z', 123_456));
    const { view } = await createConversation(deps, acme, {});
    expect(view).toMatchObject({
      title: 'February 1st, 2026 Conversation',
      public: false,
      anyone_can_post: false,
      allow_anonymous_messages: true,
      allow_search_engines: false,
      via_primary_intake_page: false,
      intake_page_id: null,
      users: [owner],
      tags: [],
      messages: [],
    });
    expect(view.slug).toMatch(/^[0-9a-f]{25}$/);
    expect(conversations.rows[0]?.memberIds).toEqual([owner.id]);
  });

  it('takes the title date and the creation time from one clock, even a microsecond before midnight', async () => {
    const clock = at('2026-12-31T23:59:59Z', 999_999);
    const { conversations, deps } = setup(() => clock);
    const { view } = await createConversation(deps, acme, {});
    expect(view.title).toBe('December 31st, 2026 Conversation');
    expect(conversations.rows[0]?.createdAt).toBe(clock);
    expect(formatCreatedTime(clock)).toBe('2026-12-31 23:59:59.999999');
  });

  it('draws a new slug when a generated one collides, a few times, then says the slug is taken', async () => {
    const { conversations, deps } = setup();
    const first = await createConversation(deps, acme, { slug: 'taken' });
    expect(first.view.slug).toBe('taken');
    // The next generated slug is found taken by a racing insert: a fresh one is drawn and stored.
    const original = conversations.insert.bind(conversations);
    let calls = 0;
    conversations.insert = async (accountId, c) => {
      calls++;
      if (calls === 1) conversations.raced.add(c.slug);
      return original(accountId, c);
    };
    const second = await createConversation(deps, acme, {});
    expect(calls).toBe(2);
    expect(second.view.slug).toMatch(/^[0-9a-f]{25}$/);
    // A slug the client chose is never replaced: taken means 409.
    await expect(createConversation(deps, acme, { slug: 'TAKEN' })).rejects.toMatchObject({ code: 'slug_taken' });
    // Generated slugs that keep colliding give up after three draws.
    conversations.insert = async () => {
      calls++;
      throw new SlugTakenError();
    };
    calls = 0;
    await expect(createConversation(deps, acme, {})).rejects.toMatchObject({ code: 'slug_taken' });
    expect(calls).toBe(3);
  });

  it('applies an intake page and its workflow, and refuses pages it may not use, with one message', async () => {
    const { conversations, deps } = setup(() => at('2026-02-01T17:21:09Z'));
    expect((await createConversation(deps, acme, { primaryIntakePage: true })).view.via_primary_intake_page).toBe(true);
    // The page's workflow is copied with each step's state: this one is due a minute after creation.
    expect(conversations.rows[0]?.workflow).toEqual({
      id: 3,
      name: 'Triage',
      steps: [
        {
          ...workflow.steps[0],
          state: 'pending',
          due_at: '2026-02-01T17:22:09.000Z',
          done_at: null,
          error: null,
          runs: 0,
        },
      ],
    });
    expect((await createConversation(deps, acme, { intakePageId: 11 })).view.intake_page_id).toBe(11);
    const refusals = await Promise.all(
      [{ intakePageId: 20 }, { intakePageId: 10 }, { intakePageId: 999 }].map((input) =>
        createConversation(deps, acme, input).catch((e: DomainError) => e),
      ),
    );
    expect(new Set(refusals.map((e) => (e as DomainError).message)).size).toBe(1);
    expect(refusals.every((e) => e instanceof DomainError && e.code === 'intake_page_unusable')).toBe(true);
  });

  it('replays a repeated Idempotency-Key and refuses it with another request', async () => {
    const { conversations, deps } = setup();
    const first = await createConversation(deps, acme, { title: 'Once' }, { idempotencyKey: 'k' });
    const again = await createConversation(deps, acme, { title: 'Once' }, { idempotencyKey: 'k' });
    expect(again).toEqual({ view: first.view, replayed: true });
    expect(conversations.rows).toHaveLength(1);
    await expect(createConversation(deps, acme, { title: 'Twice' }, { idempotencyKey: 'k' })).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    await expect(createConversation(deps, acme, {}, { idempotencyKey: 'a, b' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });
});

describe('getConversation', () => {
  it('finds by slug or title ignoring case, both when both are given, else the most recent', async () => {
    const { deps } = setup();
    let t = 0;
    const tick = () => at('2026-01-01T00:00:00Z', ++t);
    for (const [title, slug] of [
      ['Straße', 'a'],
      ['Billing', 'b'],
      ['Billing', 'c'],
      ['Latest', 'd'],
    ]) {
      await createConversation({ ...deps, clock: tick }, acme, { title, slug });
    }
    const slug = async (request: { title?: string; slug?: string }) => {
      const view: ConversationView = JSON.parse((await getConversation(deps, acme, request)).view.text);
      return view.slug;
    };
    const matched = async (request: { title?: string; slug?: string }) =>
      (await getConversation(deps, acme, request)).matched;
    expect(await matched({ slug: 'A' })).toBe('slug');
    expect(await matched({ title: 'STRASSE' })).toBe('title');
    expect(await matched({ title: 'billing', slug: 'b' })).toBe('title, slug');
    expect(await matched({ title: 'billing', slug: 'a' })).toBe('none');
    expect(await matched({})).toBe('none');
    expect(await slug({ slug: 'A' })).toBe('a');
    expect(await slug({ title: 'STRASSE' })).toBe('a');
    expect(await slug({ title: 'billing' })).toBe('c'); // the most recent of two
    expect(await slug({ title: 'billing', slug: 'b' })).toBe('b');
    expect(await slug({ title: 'billing', slug: 'a' })).toBe('d'); // both must match; else the latest
    expect(await slug({ slug: 'nope' })).toBe('d');
    expect(await slug({})).toBe('d');
    expect(await slug({ slug: 'a\u0000' })).toBe('d');
    await expect(getConversation(deps, acme, { slug: 'a\ud800' })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(getConversation(deps, other, {})).rejects.toMatchObject({ code: 'conversation_not_found' });
  });
});

describe('getConversations', () => {
  it('pages 50 at a time, newest first, and says where the page stands', async () => {
    const { deps } = setup();
    let t = 0;
    for (let i = 0; i < 51; i++) {
      await createConversation({ ...deps, clock: () => at('2026-01-01T00:00:00Z', ++t) }, acme, { slug: `s${i}` });
    }
    const first = await getConversations(deps, acme, {});
    const slugs = (page: { text: string }) => {
      const view: ConversationListView = JSON.parse(page.text);
      return view.conversations.map((c) => c.slug);
    };
    expect(slugs(first.page)).toHaveLength(50);
    expect(slugs(first.page)[0]).toBe('s50');
    expect(first.position).toEqual({ page: 1, hasPrevious: false, hasNext: true });
    const second = await getConversations(deps, acme, { page: 2 });
    expect(slugs(second.page)).toEqual(['s0']);
    expect(second.position).toEqual({ page: 2, hasPrevious: true, hasNext: false });
    await expect(getConversations(deps, acme, { page: 3 })).rejects.toMatchObject({ code: 'conversation_not_found' });
    await expect(getConversations(deps, acme, { page: 0 })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
