import {
  type InboxQuery,
  type InboxRow,
  type InboxStore,
  isConversationSource,
  isConversationState,
  isMessageType,
  isTeamRole,
  messageHtmlText,
  type PageWindow,
  SNIPPET_READ,
  type TeamMember,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type InferResult, sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import { changeMarkOf } from './change-marks.ts';
import { epochMicros, intakePageNameSql } from './conversation-reads.ts';
import { db, exec, run, slot, statement } from './query.ts';
import { searchedWords } from './said.ts';

/*
 * The team's inbox: one statement a page. The page's rows come in the order of the index
 * conversation_account_activity (account, last activity, id), filtered by what the reader may see,
 * the archive, the triage filters, a tag and a search; only the 51 rows kept are read further
 * (tags, count, read mark, person, latest message).
 */

const account = () => slot<number>('account');
const reader = () => slot<number>('reader');

/**
 * How many conversations a search reads down the inbox's order, checking each one's words, before
 * it asks the index conversation_search for all of them instead. Words many conversations say
 * (one in four or more) fill a page within these; words few say are found by the index, whose
 * matches are then few to order. (Counting the matches first, as before, timed out at 1,000,000
 * conversations for a word every message says: that count reads the index's whole list for the
 * word. A walk of 1,000 cost a selective search at 10,000 conversations a third of its rate.)
 */
export const SEARCH_WALK = 200;

/** The columns a page reads of each conversation, in every way to it. */
const PAGE_COLUMNS = [
  'c.id',
  'c.account_id',
  'c.title',
  'c.slug',
  'c.anyone_can_post',
  'c.last_activity_at',
  'c.state',
  'c.source',
  'c.assignee_id',
  'c.archived_at',
  'c.intake_page_id',
  'c.via_primary_intake_page',
] as const;

/**
 * The account's conversations in the inbox (or the archive) that the reader may see and the triage
 * filters and the tag keep, unordered.
 */
const inboxed = () =>
  db
    .selectFrom('conversation as c')
    .where('c.account_id', '=', account())
    // The archive or the inbox; then each triage filter, when given.
    .where(sql<boolean>`(c.archived_at is not null) = ${slot('archived')}::bool`)
    .where(sql<boolean>`(${slot('state')}::text is null or c.state = ${slot('state')}::text)`)
    .where(sql<boolean>`(${slot('source')}::text is null or c.source = ${slot('source')}::text)`)
    .where(
      sql<boolean>`(${slot('assignee')}::text is null
            or (${slot('assignee')}::text = 'me' and c.assignee_id = ${reader()})
            or (${slot('assignee')}::text = 'nobody' and c.assignee_id is null))`,
    )
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
            .innerJoin('tag as t', (j) => j.onRef('t.id', '=', 'ct.tag_id').onRef('t.account_id', '=', 'ct.account_id'))
            .select('ct.tag_id')
            .whereRef('ct.conversation_id', '=', 'c.id')
            .whereRef('ct.account_id', '=', 'c.account_id')
            .where(sql<boolean>`lower(t.name) = ${slot('tag')}::text`),
        ),
      ]),
    );

/** The search's words matched against a conversation's (its title's and its visible messages'). */
const says = (c: string) => sql<boolean>`${searchedWords(c)} @@ to_tsquery('simple', ${slot('terms')}::text)`;

/** The page's conversations, newest activity first. */
const listedPage = () =>
  inboxed()
    .select(PAGE_COLUMNS)
    .orderBy('c.last_activity_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(slot<number>('limit'))
    .offset(slot<number>('offset'));

/** The page's conversations among those that say the search's words (pageStatement says how). */
const searchedPage = () =>
  db
    .with('head', () =>
      inboxed()
        .select(['c.id', 'c.last_activity_at', says('c').as('hit')])
        .orderBy('c.last_activity_at', 'desc')
        .orderBy('c.id', 'desc')
        .limit(slot<number>('walk')),
    )
    .with('hits', (q) =>
      q.selectFrom('head').select(['id', 'last_activity_at']).where('hit', '=', true).limit(slot<number>('need')),
    )
    .with('walked', () =>
      db.selectNoFrom(
        sql<boolean>`(select count(*) from hits) >= ${slot('need')}::int
          or (select count(*) from head) < ${slot('walk')}::int`.as('enough'),
      ),
    )
    .with(
      (cte) => cte('indexed').materialized(),
      () =>
        inboxed()
          .select(['c.id', 'c.last_activity_at'])
          .where(says('c'))
          .where(sql<boolean>`not (select enough from walked)`),
    )
    // The page's ids first, then their rows: only the kept ones are read again.
    .with('found', (q) =>
      q
        .selectFrom((f) =>
          f
            .selectFrom('hits')
            .selectAll()
            .where(sql<boolean>`(select enough from walked)`)
            .unionAll(f.selectFrom('indexed').selectAll())
            .as('f'),
        )
        .selectAll()
        .orderBy('f.last_activity_at', 'desc')
        .orderBy('f.id', 'desc')
        .limit(slot<number>('limit'))
        .offset(slot<number>('offset')),
    )
    .selectFrom('found as f')
    .innerJoin('conversation as c', 'c.id', 'f.id')
    .select(PAGE_COLUMNS);

/**
 * A searched page read before, named by its conversations' `ids`: its rows while the account's
 * change mark is still `mark`, the one it was read at; none once it has moved.
 */
const namedPage = () =>
  db
    .selectFrom('conversation as c')
    .select(PAGE_COLUMNS)
    .where('c.account_id', '=', account())
    .where(sql<boolean>`c.id = any(${slot('ids')}::int[])`)
    .where(sql<boolean>`(${changeMarkOf(account())}) = ${slot('mark')}::text`);

/** Which conversations a page statement reads: the inbox's, a search's, or a kept search's. */
type PageWay = 'all' | 'searched' | 'named';

const pageOf = (way: PageWay) => (way === 'all' ? listedPage() : way === 'searched' ? searchedPage() : namedPage());

/**
 * A page of the inbox, newest activity first (`way`: all of it, a search's, or a kept search's
 * named by its ids). A search's page holds only conversations that say the search's words: it
 * walks the first SEARCH_WALK conversations in the page's order, checking each, and stops as soon
 * as the page is full; when that walk ends short of it (words few conversations say, or a page
 * far down), the index conversation_search names every match and those are ordered. The index's
 * part is fenced (materialized) so that it is planned for its own case, and it runs only when the
 * walk fell short. Each row carries the account's change mark, read in the same snapshot.
 */
const pageQuery = (way: PageWay) =>
  db
    .with('page', () => pageOf(way))
    .selectFrom('page as p')
    .select((eb) => [
      'p.id',
      'p.title',
      'p.slug',
      'p.anyone_can_post',
      epochMicros('p.last_activity_at').as('activity_us'),
      changeMarkOf(account()).as('mark'),
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
      // Nobody has played the team's latest recording kept here (a note's plays are never receipts).
      sql<boolean>`coalesce((select not exists (select 1 from message_play mp where mp.message_id = m.id)
        from message m join account_user u on u.id = m.author_id and u.team_role is not null
        where m.conversation_id = p.id and m.account_id = ${account()} and m.hidden_at is null
          and not m.internal and m.media_key is not null
        order by m.created_at desc, m.id desc limit 1), false)`.as('unplayed'),
      'p.state',
      'p.source',
      sql<boolean>`p.archived_at is not null`.as('archived'),
      eb.selectFrom('account_user as u').select('u.name').whereRef('u.id', '=', 'p.assignee_id').as('assignee'),
      // The page it began on: its own, or the account's primary one.
      sql<string | null>`${sql.raw(intakePageNameSql('p'))}`.as('intake_page'),
      // Who it is with: the first writer outside the team (an anonymous one under the name they
      // gave); else its first member outside the team, who has not written yet (coalesce reads
      // the members only for a conversation nobody outside the team wrote in).
      sql<{ name: string | null; claimed: string | null; waiting?: boolean } | null>`coalesce((select
          json_build_object('name', u.name, 'claimed', m.claimed_name)
        from message m left join account_user u on u.id = m.author_id
        where m.conversation_id = p.id and m.account_id = ${account()} and m.hidden_at is null
          and not m.internal and (u.id is null or u.team_role is null)
        order by m.created_at, m.id limit 1), (select json_build_object('name', u.name, 'claimed', null, 'waiting', true)
        from conversation_member cm join account_user u on u.id = cm.user_id
        where cm.conversation_id = p.id and cm.account_id = ${account()} and u.team_role is null
        order by u.id limit 1))`.as('person'),
      // A message kept as HTML is read further, for its words once its markup is gone.
      sql<{
        kind: string;
        text: string;
        format: string;
        seconds: number;
        author: string | null;
      } | null>`(select json_build_object(
          'kind', m.message_type, 'format', m.format,
          'text', left(m.text, case when m.format = 'html' then ${sql.lit(4 * SNIPPET_READ)} else ${sql.lit(SNIPPET_READ)} end),
          'seconds', m.recorded_duration_seconds,
          'author', coalesce(u.name, m.claimed_name))
        from message m left join account_user u on u.id = m.author_id
        where m.conversation_id = p.id and m.account_id = ${account()} and m.hidden_at is null
        order by m.created_at desc, m.id desc limit 1)`.as('last'),
    ])
    .orderBy('p.last_activity_at', 'desc')
    .orderBy('p.id', 'desc');

const pageStatement = (name: string, way: PageWay) => statement(name, pageQuery(way));

type PageRow = InferResult<ReturnType<typeof pageQuery>>[number];

const PAGE = {
  all: pageStatement('inbox_page', 'all'),
  searched: pageStatement('inbox_page_searched', 'searched'),
  named: pageStatement('inbox_page_named', 'named'),
};

const TAG_NAMES = statement(
  'inbox_tag_names',
  db.selectFrom('tag').select('name').where('account_id', '=', account()).orderBy(sql`lower(name)`).limit(500),
);

/** The account's team, by name. */
const TEAM = statement(
  'inbox_team',
  db
    .selectFrom('account_user')
    .select(['id', 'name', 'email', 'team_role'])
    .where('account_id', '=', account())
    .where('team_role', 'is not', null)
    .orderBy(sql`lower(name)`)
    .orderBy('id')
    .limit(500),
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

/** How many searched pages each process keeps (their ids only), the least recently read going first. */
export const SEARCHES_KEPT = 1_000;

/** A searched page as it was read: its conversations' ids in order, and the change mark it was read at. */
interface KeptSearch {
  mark: string;
  ids: number[];
  hasMore: boolean;
}

export class PgInboxStore implements InboxStore {
  private readonly em: EntityManager;
  private readonly walk: number;
  /**
   * Searched pages by what was asked (reader, filters, words, page), with the change mark they
   * were read at. A search whose matches are many and far down the inbox's order costs PostgreSQL
   * the reading and ordering of every match (39 ms for 11,111 of 1,000,000 conversations). The
   * same page asked again reads only its rows, by their ids, while the account's mark is still
   * the one it was read at (checked in that statement); once the mark has moved, it is searched
   * again. The mark moves with every change to what a search finds (change-marks.ts): a
   * conversation's words, title, activity, members, tags, triage or archive. A page's ids each,
   * SEARCHES_KEPT at most.
   */
  readonly #searches = new LRUCache<string, KeptSearch>({ max: SEARCHES_KEPT });

  /** `walk`: SEARCH_WALK (tests change it, to take each way to a searched page). */
  constructor(em: EntityManager, walk = SEARCH_WALK) {
    this.em = em;
    this.walk = walk;
  }

  async page(accountId: number, who: { userId: number; seesAll: boolean }, filter: InboxQuery, window: PageWindow) {
    const args = {
      account: accountId,
      reader: who.userId,
      seesAll: who.seesAll,
      tag: filter.tagKey,
      state: filter.state,
      source: filter.source,
      assignee: filter.assignee,
      archived: filter.archived,
      limit: window.limit + 1,
      offset: window.offset,
    };
    if (filter.terms === null) return this.#answer(await run(this.em, PAGE.all, args), window);
    // The reader matters where it decides what is seen: the conversations they are in, "mine".
    const key = JSON.stringify([
      accountId,
      who.seesAll ? null : who.userId,
      filter.assignee === 'me' ? who.userId : null,
      filter,
      window,
    ]);
    const kept = this.#searches.get(key);
    if (kept) {
      const rows = await run(this.em, PAGE.named, { ...args, ids: kept.ids, mark: kept.mark });
      if (rows.length > 0) return { ...this.#answer(rows, window), hasMore: kept.hasMore };
    }
    const rows = await run(this.em, PAGE.searched, {
      ...args,
      terms: filter.terms,
      walk: this.walk,
      need: window.offset + window.limit + 1,
    });
    const mark = rows[0]?.mark;
    if (typeof mark === 'string') {
      this.#searches.set(key, {
        mark,
        ids: rows.slice(0, window.limit).map((r) => r.id),
        hasMore: rows.length > window.limit,
      });
    }
    return this.#answer(rows, window);
  }

  #answer(rows: PageRow[], window: PageWindow): { rows: InboxRow[]; hasMore: boolean } {
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
        unplayed: r.unplayed,
        person: r.person && {
          name: r.person.name ?? r.person.claimed,
          verified: r.person.name !== null,
          waiting: r.person.waiting === true,
        },
        last: r.last && {
          kind: isMessageType(r.last.kind) ? r.last.kind : 'text',
          text: r.last.format === 'html' ? messageHtmlText(r.last.text) : r.last.text,
          seconds: r.last.seconds,
          author: r.last.author,
        },
        source: isConversationSource(r.source) ? r.source : 'api',
        intakePage: r.intake_page,
        state: isConversationState(r.state) ? r.state : 'open',
        assignee: r.assignee,
        archived: r.archived,
      }),
    );
    return { rows: page, hasMore: rows.length > window.limit };
  }

  async team(accountId: number): Promise<TeamMember[]> {
    const rows = await run(this.em, TEAM, { account: accountId });
    return rows.flatMap((r) =>
      isTeamRole(r.team_role) ? [{ id: r.id, name: r.name, email: r.email, role: r.team_role }] : [],
    );
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
