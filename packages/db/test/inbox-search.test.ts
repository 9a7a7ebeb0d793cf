import { searchTerms } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSeed, PgInboxStore, PgTranscriptStore, PgUpdateConversationStore } from '../src/index.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * The inbox's search has two ways to a page: reading conversations by activity and checking each
 * (the walk, which ends at a full page), or asking the index conversation_search for every match
 * (when the walk falls short). Both must answer the same pages: here each search is run both ways,
 * by making the walk 1 conversation long, and longer than the account; and a page asked again,
 * kept by its ids at the account's change mark, is the page as it is now.
 */

let db: TestDatabase;
let accountId: number;
let owner: number;

beforeAll(async () => {
  db = await openTestDatabase();
  const seeded = await loadSeed(db.orm.em.fork(), {
    accounts: [
      {
        key: 'search',
        name: 'Search',
        host: 'https://search.example.com',
        owner: 'olive@search.example',
        users: [{ email: 'olive@search.example', name: 'Olive' }],
        conversations: Array.from({ length: 120 }, (_, i) => ({
          title: i % 7 === 0 ? `Invoice ${i}` : `Question ${i}`,
          slug: `c-${i}`,
          created_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
          messages: [
            { author: null, text: `Hello number ${i}` },
            { author: null, text: i % 5 === 0 ? 'The invoice is late' : 'Thanks', hidden: i % 10 === 0 },
          ],
        })),
      },
    ],
  });
  accountId = seeded.accounts[0]?.id ?? 0;
  const [row] = (await db.orm.em
    .fork()
    .getConnection()
    .execute("select id from account_user where email = 'olive@search.example'")) as { id: number }[];
  owner = row?.id ?? 0;
});
afterAll(async () => db?.close());

const search = async (store: PgInboxStore, words: string, offset = 0) =>
  (
    await store.page(
      accountId,
      { userId: owner, seesAll: true },
      {
        tagKey: null,
        terms: searchTerms(words),
        state: null,
        assignee: null,
        source: null,
        archived: false,
      },
      { limit: 50, offset },
    )
  ).rows.map((r) => r.slug);

describe('the inbox search', () => {
  it('finds the same conversations, in the same order, whichever way it takes', async () => {
    const indexed = new PgInboxStore(db.orm.em.fork(), 1);
    const scanned = new PgInboxStore(db.orm.em.fork(), 1_000);
    const shipped = new PgInboxStore(db.orm.em.fork());
    const words = [
      'invoice',
      'INVOI',
      'hello',
      'number 11',
      'late invoice',
      'nothing here',
      'question 1',
      'question late',
    ];
    for (const said of words) {
      for (const offset of [0, 50, 100]) {
        const walked = await search(scanned, said, offset);
        expect(await search(indexed, said, offset), `${said} @${offset}`).toEqual(walked);
        expect(await search(shipped, said, offset), `${said} @${offset}`).toEqual(walked);
        // Asked again at the same change mark: the kept page's ids, read again.
        expect(await search(shipped, said, offset), `${said} @${offset} again`).toEqual(walked);
      }
    }
    // The words may be said in the title and the messages, in different ones.
    expect(await search(indexed, 'question late')).toContain('c-5');
    // What it finds: titles and messages, never a hidden message's words.
    const late = await search(indexed, 'late');
    expect(late).toHaveLength(12);
    expect(late).not.toContain('c-10');
    expect(late).toContain('c-5');
    expect(await search(indexed, 'hello')).toHaveLength(50);
  });
});

describe('a searched page read again', () => {
  const rows = (sql: string, params: unknown[] = []) => db.orm.em.fork().getConnection().execute(sql, params);
  const idOf = async (slug: string) =>
    (
      (await rows('select id from conversation where slug = ? and account_id = ?', [slug, accountId])) as {
        id: number;
      }[]
    )[0]?.id ?? 0;

  it('is the page as it is now, after each change to what the search finds', async () => {
    const store = new PgInboxStore(db.orm.em.fork());
    const before = await search(store, 'receipt');
    expect(before).toEqual([]);
    const invoices = await search(store, 'invoice');
    expect(invoices).not.toContain('c-1');
    // Read again: the same page.
    expect(await search(store, 'invoice')).toEqual(invoices);

    // A title changed through update_conversation's statement.
    const renamed = await idOf('c-1');
    await new PgUpdateConversationStore(db.orm.em.fork()).updateConversation(
      { id: accountId, host: 'https://search.example.com', key: 'search' },
      renamed,
      { title: { title: 'Invoice for c-1', key: 'invoice for c-1' } },
    );
    expect(await search(store, 'invoice')).toContain('c-1');

    // A recording's transcript that says the word, made after the page was read.
    const heard = await idOf('c-2');
    expect(await search(store, 'invoice')).not.toContain('c-2');
    await rows(
      `insert into message (conversation_id, account_id, message_type, anonymous, text, media_key,
         media_content_type, media_bytes, recorded_duration_seconds)
       values (?, ?, 'audio', true, '', 'search/heard.webm', 'audio/webm', 1000, 3)`,
      [heard, accountId],
    );
    // (The message's insert queued its transcript, pending.)
    await new PgTranscriptStore(db.orm.em.fork()).settle(
      { mediaKey: 'search/heard.webm', accountId, attempts: 1 },
      { kind: 'complete', transcript: { language: 'en', text: 'about the invoice', segments: [] } },
    );
    expect(await search(store, 'invoice')).toContain('c-2');
  });
});
