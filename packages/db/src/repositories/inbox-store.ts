import type { InboxRow, InboxStore, PageWindow } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { epochMicros } from './conversation-reads.ts';
import { db, exec, run, slot, statement } from './query.ts';

/*
 * The team's inbox: one statement a page. The page's rows come in the order of the index
 * conversation_account_activity (account, last activity, id), filtered by what the reader may see,
 * a tag and a part of the title; only the 51 rows kept are read further (tags, count, read mark).
 */

const account = () => slot<number>('account');
const reader = () => slot<number>('reader');

const PAGE = statement(
  'inbox_page',
  db
    .with('page', (q) =>
      q
        .selectFrom('conversation as c')
        .select(['c.id', 'c.title', 'c.slug', 'c.anyone_can_post', 'c.last_activity_at'])
        .where('c.account_id', '=', account())
        .where((eb) =>
          eb.or([
            eb.ref('c.anyone_can_post'),
            sql<boolean>`${slot('seesAll')}::bool`,
            eb.exists(
              eb
                .selectFrom('conversation_member as cm')
                .select('cm.user_id')
                .whereRef('cm.conversation_id', '=', 'c.id')
                .where('cm.user_id', '=', reader()),
            ),
          ]),
        )
        .where((eb) =>
          eb.or([
            sql<boolean>`${slot('tag')}::text is null`,
            eb.exists(
              eb
                .selectFrom('conversation_tag as ct')
                .innerJoin('tag as t', (j) =>
                  j.onRef('t.id', '=', 'ct.tag_id').onRef('t.account_id', '=', 'ct.account_id'),
                )
                .select('ct.tag_id')
                .whereRef('ct.conversation_id', '=', 'c.id')
                .whereRef('ct.account_id', '=', 'c.account_id')
                .where(sql<boolean>`lower(t.name) = ${slot('tag')}::text`),
            ),
          ]),
        )
        // Searched: the title holds the words, or a message the team may read says them.
        .where(
          sql<boolean>`(${slot('title')}::text is null or strpos(c.title_key, ${slot('title')}::text) > 0
            or c.id in (select m.conversation_id from message m where m.account_id = ${account()}
              and m.hidden_at is null
              and to_tsvector('simple', m.text) @@ plainto_tsquery('simple', ${slot('words')}::text)))`,
        )
        .orderBy('c.last_activity_at', 'desc')
        .orderBy('c.id', 'desc')
        .limit(slot<number>('limit'))
        .offset(slot<number>('offset')),
    )
    .selectFrom('page as p')
    .select((eb) => [
      'p.id',
      'p.title',
      'p.slug',
      'p.anyone_can_post',
      epochMicros('p.last_activity_at').as('activity_us'),
      eb
        .selectFrom('message as m')
        .select(sql<number>`count(*)::int`.as('n'))
        .whereRef('m.conversation_id', '=', 'p.id')
        .where('m.account_id', '=', account())
        .where('m.hidden_at', 'is', null)
        .as('message_count'),
      eb.fn
        .coalesce(
          eb
            .selectFrom('conversation_tag as ct')
            .innerJoin('tag as t', 't.id', 'ct.tag_id')
            .select(sql<string[]>`array_agg(t.name order by t.id)`.as('names'))
            .whereRef('ct.conversation_id', '=', 'p.id')
            .where('ct.account_id', '=', account()),
          sql<string[]>`'{}'`,
        )
        .as('tags'),
      eb.fn
        .coalesce(
          eb
            .selectFrom('conversation_read as r')
            .select(sql<boolean>`r.read_at < p.last_activity_at`.as('older'))
            .where('r.user_id', '=', reader())
            .whereRef('r.conversation_id', '=', 'p.id'),
          // Never opened: unread when someone else wrote in it (an empty one is not news).
          sql<boolean>`exists (select 1 from message m where m.conversation_id = p.id
            and m.account_id = ${account()} and m.hidden_at is null and m.author_id is distinct from ${reader()})`,
        )
        .as('unread'),
    ])
    .orderBy('p.last_activity_at', 'desc')
    .orderBy('p.id', 'desc'),
);

const TAG_NAMES = statement(
  'inbox_tag_names',
  db.selectFrom('tag').select('name').where('account_id', '=', account()).orderBy(sql`lower(name)`).limit(500),
);

/** A participant's conversations: theirs as a member, and those a device's pass opens. */
const MINE = statement(
  'inbox_mine',
  db
    .selectFrom('conversation as c')
    .select(['c.id', 'c.title', 'c.slug', 'c.anyone_can_post', epochMicros('c.last_activity_at').as('activity_us')])
    .where('c.account_id', '=', account())
    .where((eb) =>
      eb.or([
        eb(
          'c.id',
          'in',
          eb
            .selectFrom('conversation_member as cm')
            .select('cm.conversation_id')
            .where('cm.account_id', '=', account())
            .where('cm.user_id', '=', sql<number>`${slot('user')}::int`),
        ),
        eb('c.id', '=', sql<number>`any(${slot('ids')}::int[])`),
      ]),
    )
    .orderBy('c.last_activity_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(slot<number>('limit')),
);

export class PgInboxStore implements InboxStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async page(
    accountId: number,
    who: { userId: number; seesAll: boolean },
    filter: { tagKey: string | null; titlePart: string | null; words: string | null },
    window: PageWindow,
  ) {
    const rows = await run(this.em, PAGE, {
      account: accountId,
      reader: who.userId,
      seesAll: who.seesAll,
      tag: filter.tagKey,
      title: filter.titlePart,
      words: filter.words,
      limit: window.limit + 1,
      offset: window.offset,
    });
    const page = rows.slice(0, window.limit).map(
      (r): InboxRow => ({
        id: r.id,
        title: r.title,
        slug: r.slug,
        anyoneCanPost: r.anyone_can_post,
        lastActivityAt: BigInt(r.activity_us),
        messageCount: r.message_count ?? 0,
        tags: r.tags,
        unread: r.unread,
      }),
    );
    return { rows: page, hasMore: rows.length > window.limit };
  }

  async tagNames(accountId: number): Promise<string[]> {
    return (await run(this.em, TAG_NAMES, { account: accountId })).map((r) => r.name);
  }

  async mine(accountId: number, userId: number | null, ids: readonly number[], limit: number) {
    const rows = await run(this.em, MINE, { account: accountId, user: userId, ids: [...ids], limit });
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      slug: r.slug,
      anyoneCanPost: r.anyone_can_post,
      lastActivityAt: BigInt(r.activity_us),
    }));
  }

  async markRead(accountId: number, userId: number, conversationId: number): Promise<void> {
    await exec(
      this.em,
      db
        .insertInto('conversation_read')
        .values({ user_id: userId, conversation_id: conversationId, account_id: accountId })
        .onConflict((c) => c.columns(['user_id', 'conversation_id']).doUpdateSet({ read_at: sql<Date>`now()` })),
    );
  }
}
