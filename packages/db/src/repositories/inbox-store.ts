import {
  type InboxQuery,
  type InboxRow,
  type InboxStore,
  isConversationSource,
  isConversationState,
  isMessageType,
  isTeamRole,
  type PageWindow,
  SNIPPET_READ,
  type TeamMember,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { epochMicros, intakePageNameSql } from './conversation-reads.ts';
import { db, exec, run, slot, statement } from './query.ts';

/*
 * The team's inbox: one statement a page. The page's rows come in the order of the index
 * conversation_account_activity (account, last activity, id), filtered by what the reader may see,
 * the archive, the triage filters, a tag and a search; only the 51 rows kept are read further
 * (tags, count, read mark, person, latest message).
 */

const account = () => slot<number>('account');
const reader = () => slot<number>('reader');

/**
 * A search this many messages say is common: its page is found by reading conversations by
 * activity, not by collecting every match (which, for a word every message says, timed out at
 * 1,000,000 conversations).
 */
export const COMMON_MATCHES = 10_000;

/**
 * A page of the inbox; `searched`: only conversations whose title or one of whose messages the
 * team may read has the search's words. Two statements, so each is planned for its own case: a
 * search collects its matches from the full-text indexes (conversation_title_search,
 * message_text_search) when they are few, where scanning by activity would read the account's
 * every conversation; when they are many it scans (COMMON_MATCHES).
 */
const pageStatement = (name: string, searched: boolean) =>
  statement(
    name,
    db
      .with('page', (q) => {
        const listed = q
          .selectFrom('conversation as c')
          .select([
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
          ])
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
          .orderBy('c.last_activity_at', 'desc')
          .orderBy('c.id', 'desc')
          .limit(slot<number>('limit'))
          .offset(slot<number>('offset'));
        const terms = sql`to_tsquery('simple', ${slot('terms')}::text)`;
        const said = sql`m.account_id = ${account()} and m.hidden_at is null and to_tsvector('simple', m.text) @@ ${terms}`;
        // Words few messages say: their conversations are collected from the indexes first.
        // Words many say (COMMON_MATCHES or more; counting stops there): the rows are read by
        // activity, each checked, and a page is found after a few. Each conversation's own
        // messages are read by its index, fenced (offset 0) so the planner does not reach for
        // the full-text index, whose bitmap for a common word is every message of the table.
        return searched
          ? listed.where(
              sql<boolean>`case when (select count(*) from (select 1 from message m where ${said}
                  limit ${slot('common')}::int) common) < ${slot('common')}::int
                then c.id in (select t.id from conversation t where t.account_id = ${account()}
                    and to_tsvector('simple', t.title) @@ ${terms}
                  union select m.conversation_id from message m where ${said})
                else to_tsvector('simple', c.title) @@ ${terms}
                  or exists (select 1 from (select m.text from message m where m.conversation_id = c.id
                      and m.account_id = ${account()} and m.hidden_at is null offset 0) mine
                    where to_tsvector('simple', mine.text) @@ ${terms}) end`,
            )
          : listed;
      })
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
          and (u.id is null or u.team_role is null)
        order by m.created_at, m.id limit 1), (select json_build_object('name', u.name, 'claimed', null, 'waiting', true)
        from conversation_member cm join account_user u on u.id = cm.user_id
        where cm.conversation_id = p.id and cm.account_id = ${account()} and u.team_role is null
        order by u.id limit 1))`.as('person'),
        sql<{ kind: string; text: string; seconds: number; author: string | null } | null>`(select json_build_object(
          'kind', m.message_type, 'text', left(m.text, ${sql.lit(SNIPPET_READ)}), 'seconds', m.recorded_duration_seconds,
          'author', coalesce(u.name, m.claimed_name))
        from message m left join account_user u on u.id = m.author_id
        where m.conversation_id = p.id and m.account_id = ${account()} and m.hidden_at is null
        order by m.created_at desc, m.id desc limit 1)`.as('last'),
      ])
      .orderBy('p.last_activity_at', 'desc')
      .orderBy('p.id', 'desc'),
  );

const PAGE = { all: pageStatement('inbox_page', false), searched: pageStatement('inbox_page_searched', true) };

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

export class PgInboxStore implements InboxStore {
  private readonly em: EntityManager;
  private readonly commonMatches: number;

  /** `commonMatches`: COMMON_MATCHES (tests make it small, to walk both ways of searching). */
  constructor(em: EntityManager, commonMatches = COMMON_MATCHES) {
    this.em = em;
    this.commonMatches = commonMatches;
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
    const rows =
      filter.terms === null
        ? await run(this.em, PAGE.all, args)
        : await run(this.em, PAGE.searched, { ...args, terms: filter.terms, common: this.commonMatches });
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
        person: r.person && {
          name: r.person.name ?? r.person.claimed,
          verified: r.person.name !== null,
          waiting: r.person.waiting === true,
        },
        last: r.last && {
          kind: isMessageType(r.last.kind) ? r.last.kind : 'text',
          text: r.last.text,
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
