import type {
  AccountAddress,
  GetMessagesAnswer,
  MessageDetailView,
  MessageQuery,
  MessageStore,
  PageWindow,
  WireJson,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { messageJson, slugKey } from './conversation-reads.ts';
import { db, run, slot, statement } from './query.ts';

/*
 * The messages resource's reads, each one prepared statement whose answer PostgreSQL writes as
 * JSON (messageJson, the same builder as the conversations' messages). Hidden messages are in
 * none of them.
 */

const account = () => slot<number>('account');

/**
 * A page of the account's messages, newest first: of the conversation the slug names (its index
 * message_conversation_order) or of all (message_account_recent), within the times asked. One id
 * past the page is read to tell whether another follows; `found` says whether a slug asked named
 * a conversation.
 */
const PAGE = statement(
  'messages_page',
  db
    .with('target', () =>
      db
        .selectFrom('conversation')
        .select('id')
        .where('account_id', '=', account())
        .where(sql<boolean>`${slot('slug')}::text is not null`)
        .where(sql<boolean>`${slugKey('slug')} = ${slot('slug')}::text`),
    )
    .with('w', () =>
      db
        .selectFrom('message')
        .select(['id', 'created_at'])
        .where('account_id', '=', account())
        .where('hidden_at', 'is', null)
        .where(sql<boolean>`(${slot('slug')}::text is null or conversation_id = (select id from target))`)
        .where(sql<boolean>`(${slot('after')}::timestamptz is null or created_at >= ${slot('after')}::timestamptz)`)
        .where(sql<boolean>`(${slot('before')}::timestamptz is null or created_at < ${slot('before')}::timestamptz)`)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(sql<number>`${slot<number>('limit')} + 1`)
        .offset(slot<number>('offset')),
    )
    .with('p', (q) =>
      q
        .selectFrom('w')
        .select([
          'w.id',
          'w.created_at',
          sql<number>`row_number() over (order by w.created_at desc, w.id desc)`.as('rn'),
          sql<number>`count(*) over ()`.as('total'),
        ]),
    )
    .selectFrom('p')
    .innerJoin('message as m', 'm.id', 'p.id')
    .innerJoin('conversation as c', 'c.id', 'm.conversation_id')
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .select([
      sql<string>`concat('{"messages":[',
        string_agg(${messageJson('detail')}, ',' order by p.created_at desc, p.id desc), ']}')`.as('json'),
      sql<number>`count(*)::int`.as('count'),
      sql<boolean>`coalesce(bool_or(p.total > ${slot<number>('limit')}), false)`.as('has_more'),
      sql<boolean>`(${slot('slug')}::text is null or exists (select 1 from target))`.as('found'),
    ])
    .where('p.rn', '<=', slot<number>('limit')),
);

/** One message of the account, as create_message answers it. */
const ONE = statement(
  'message_one',
  db
    .selectFrom('message as m')
    .innerJoin('conversation as c', 'c.id', 'm.conversation_id')
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .select(sql<string>`${messageJson('detail')}`.as('json'))
    .where('m.account_id', '=', account())
    .where('m.id', '=', slot<number>('message'))
    .where('m.hidden_at', 'is', null),
);

const POSTED = statement(
  'message_posted',
  db
    .selectFrom('message')
    .select(['conversation_id', 'author_id', 'text'])
    .where('account_id', '=', account())
    .where('id', '=', slot<number>('message')),
);

export class PgMessageStore implements MessageStore {
  private readonly em: EntityManager;
  /** Whether a speech engine is configured: a transcript not made yet is `pending`, else `off`. */
  private readonly transcribing: boolean;

  constructor(em: EntityManager, options: { transcribing?: boolean } = {}) {
    this.em = em;
    this.transcribing = options.transcribing === true;
  }

  async page(a: AccountAddress & { id: number }, query: MessageQuery, window: PageWindow) {
    const [row] = await run(this.em, PAGE, {
      account: a.id,
      host: a.host,
      key: a.key,
      slug: query.conversationSlugKey,
      after: query.createdAfter,
      before: query.createdBefore,
      limit: window.limit,
      offset: window.offset,
      transcribing: this.transcribing,
    });
    const page: WireJson<GetMessagesAnswer> = { text: row?.json ?? '{"messages":[]}' };
    return { page, count: row?.count ?? 0, hasMore: row?.has_more === true, conversationFound: row?.found !== false };
  }

  async one(a: AccountAddress & { id: number }, messageId: number): Promise<WireJson<MessageDetailView> | null> {
    const [row] = await run(this.em, ONE, {
      account: a.id,
      host: a.host,
      key: a.key,
      message: messageId,
      transcribing: this.transcribing,
    });
    return row ? { text: row.json } : null;
  }

  async posted(accountId: number, messageId: number) {
    const [row] = await run(this.em, POSTED, { account: accountId, message: messageId });
    return row ? { conversationId: row.conversation_id, authorId: row.author_id, text: row.text } : null;
  }
}
