import type {
  ConversationAccess,
  ConversationPageRecord,
  MessageMedia,
  MessagePageRecord,
  MessageWindow,
  PageMessageRecord,
  SiteAccount,
  SiteStore,
  ThreadPreview,
} from '@convo/domain';
import { isConversationSource, isConversationState, isTeamRole } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type ExpressionBuilder, sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { changeMarkOf } from './change-marks.ts';
import {
  epochMicros,
  hosted,
  MESSAGE_COLUMNS,
  type MessageColumns,
  message,
  SETTINGS_OF_CONVERSATION,
  settingsOf,
  shownMessages,
  slugKey,
  tagsOf,
  usersOf,
} from './conversation-reads.ts';
import { type Database, db, run, slot, statement } from './query.ts';

/*
 * The reads of an account's own site (its conversation pages, embeds and robots.txt): each one
 * statement, each scoped to the account the request's host names.
 */

/** Where two accounts share a host (only possible for accounts made before hosts were unique), the first wins. */
const ACCOUNT_BY_HOST = statement(
  'site_account_by_host',
  db
    .selectFrom('account')
    .select(['id', 'key', 'name', 'host'])
    .where((eb) => eb('host', '=', eb.fn.any(slot<string[]>('origins'))))
    .orderBy('id')
    .limit(1),
);

type OnConversation = ExpressionBuilder<Database, 'conversation'>;

/** What a page shows of a message beside the API's fields (mapped by `pageMessage`). */
const PAGE_MESSAGE_COLUMNS = [
  ...MESSAGE_COLUMNS,
  hosted,
  epochMicros('m.created_at').as('created_us'),
  'u.team_role as author_team',
  'm.claimed_name',
  'm.poster',
  'm.internal',
  'm.parent_id',
  'm.at_seconds',
  // Whether anyone reacted: a page reads the reactions of those messages alone (none: no statement).
  sql<boolean>`exists (select 1 from message_reaction r where r.message_id = m.id)`.as('reacted'),
] as const;

const pageMessage = (
  m: MessageColumns & {
    author_team: string | null;
    claimed_name: string | null;
    created_us: string;
    poster: boolean;
    internal: boolean;
    parent_id: number | null;
    at_seconds: number | null;
    reacted: boolean;
  },
): PageMessageRecord => ({
  ...message(m),
  createdAt: BigInt(m.created_us),
  authorTeamRole: !m.anonymous && isTeamRole(m.author_team) ? m.author_team : null,
  claimedName: m.claimed_name ?? null,
  poster: m.poster,
  internal: m.internal,
  parentId: m.parent_id,
  atSeconds: m.at_seconds,
  reacted: m.reacted === true,
});

/** Whether the page is the team's: internal notes are among its messages. */
const team = () => sql<boolean>`${slot('team')}::boolean`;

/**
 * A conversation's shown messages of its own (not thread replies) in order, from the index
 * message_conversation_order.
 */
const shownIds = (eb: OnConversation) =>
  eb
    .selectFrom('message')
    .whereRef('message.conversation_id', '=', 'conversation.id')
    .whereRef('message.account_id', '=', 'conversation.account_id')
    .where('message.hidden_at', 'is', null)
    .where('message.parent_id', 'is', null)
    .where(sql<boolean>`(not message.internal or ${team()})`)
    .orderBy('message.created_at')
    .orderBy('message.id');

/*
 * One page of a conversation: its head, the window of `size` messages from position `start`
 * (null: the last `size`), the ids of up to `earlier` messages before the window, its message
 * count and first text, and the window's threads. Positions are taken along (created_at, id), the
 * index message_conversation_order, so no page reads more rows of the table than it shows. The
 * window's ids are taken once (`win`): read again for each message it holds, as a subquery of
 * `in` was, a page of 50 cost 50 scans of the window.
 */
const PAGE = statement(
  'site_conversation_page',
  db
    .with('n', (q) =>
      q
        .selectFrom('message')
        .select(sql<number>`count(*)::int`.as('total'))
        .where('conversation_id', '=', slot<number>('conversation'))
        .where('account_id', '=', slot<number>('account'))
        .where('hidden_at', 'is', null)
        .where('parent_id', 'is', null)
        .where(sql<boolean>`(not internal or ${team()})`),
    )
    .with('w', (q) =>
      q
        .selectFrom('n')
        .select([
          sql<number>`coalesce(${slot<number | null>('start')}::int, greatest(0, n.total - ${slot<number>('size')}::int))`.as(
            'start',
          ),
          'n.total',
        ]),
    )
    .with('win', () =>
      db
        .selectFrom('message as m')
        .leftJoin('account_user as u', 'u.id', 'm.author_id')
        .select(PAGE_MESSAGE_COLUMNS)
        .select('m.created_at as at')
        .where('m.conversation_id', '=', slot<number>('conversation'))
        .where('m.account_id', '=', slot<number>('account'))
        .where('m.hidden_at', 'is', null)
        .where('m.parent_id', 'is', null)
        .where(sql<boolean>`(not m.internal or ${team()})`)
        .orderBy('m.created_at')
        .orderBy('m.id')
        .offset(sql<number>`(select w.start from w)`)
        .limit(slot<number>('size')),
    )
    .selectFrom(['conversation', 'w'])
    .select((eb) => [
      'conversation.id',
      'conversation.title',
      'conversation.slug',
      ...SETTINGS_OF_CONVERSATION,
      epochMicros('conversation.created_at').as('created_us'),
      usersOf(eb),
      tagsOf(eb),
      'w.total',
      'w.start',
      'conversation.state',
      'conversation.source',
      'conversation.assignee_id',
      sql<boolean>`conversation.archived_at is not null`.as('archived'),
      // What a link preview says: never a note, whoever looks.
      shownIds(eb).select('message.text').where('message.internal', '=', false).limit(1).as('first_text'),
      jsonArrayFrom(eb.selectFrom('win').selectAll('win').orderBy('win.at').orderBy('win.id')).as('messages'),
      // The latest replies of the window's threads (`rn` 1 is the latest), with each thread's count.
      jsonArrayFrom(
        eb
          .selectFrom(
            shownMessages(eb, team())
              .select(PAGE_MESSAGE_COLUMNS)
              .select([
                sql<number>`row_number() over (partition by m.parent_id order by m.created_at desc, m.id desc)`.as(
                  'rn',
                ),
                sql<number>`(count(*) over (partition by m.parent_id))::int`.as('replies'),
              ])
              .where('m.parent_id', 'in', eb.selectFrom('win').select('win.id'))
              .as('r'),
          )
          .selectAll('r')
          .where('r.rn', '<=', slot<number>('preview'))
          .orderBy('r.parent_id')
          .orderBy('r.rn', 'desc'),
      ).as('thread_replies'),
      // The ids of the other replies, latest first: their anchors lead to their threads' pages.
      eb.fn
        .coalesce(
          eb
            .selectFrom(
              eb
                .selectFrom('message')
                .select('message.id')
                .whereRef('message.conversation_id', '=', 'conversation.id')
                .whereRef('message.account_id', '=', 'conversation.account_id')
                .where('message.parent_id', 'is not', null)
                .where('message.hidden_at', 'is', null)
                .where(sql<boolean>`(not message.internal or ${team()})`)
                .orderBy('message.id', 'desc')
                .limit(slot<number>('earlier'))
                .as('e'),
            )
            .select(sql<number[]>`array_agg(e.id order by e.id desc)`.as('ids')),
          sql<number[]>`'{}'`,
        )
        .as('reply_ids'),
      eb.fn
        .coalesce(
          eb
            .selectFrom(
              shownIds(eb)
                .select(['message.id', 'message.created_at'])
                .offset(sql<number>`greatest(0, w.start - ${slot<number>('earlier')}::int)`)
                .limit(sql<number>`least(w.start, ${slot<number>('earlier')}::int)`)
                .as('e'),
            )
            .select(sql<number[]>`array_agg(e.id order by e.created_at, e.id)`.as('ids')),
          sql<number[]>`'{}'`,
        )
        .as('earlier_ids'),
    ])
    .where('conversation.account_id', '=', slot<number>('account'))
    .where('conversation.id', '=', slot<number>('conversation'))
    .where(sql<boolean>`(w.start < w.total or w.start = 0)`),
);

/**
 * Who may see a conversation (beside its id and slug): its settings, members, and since when its starting devices' passes
 * open it (milliseconds; null: every pass not past its lifetime). Mapped by `accessOf`.
 */
const accessColumns = (eb: OnConversation) => [
  ...SETTINGS_OF_CONVERSATION,
  sql<string | null>`(extract(epoch from ${sql.ref('conversation.passes_valid_after')}) * 1000)::bigint::text`.as(
    'passes_after_ms',
  ),
  eb.fn
    .coalesce(
      eb
        .selectFrom('conversation_member as cm')
        .select(sql<number[]>`array_agg(cm.user_id)`.as('ids'))
        .whereRef('cm.conversation_id', '=', 'conversation.id')
        .whereRef('cm.account_id', '=', 'conversation.account_id'),
      sql<number[]>`'{}'`,
    )
    .as('member_ids'),
];

const selectAccess = () =>
  db.selectFrom('conversation').select(['conversation.id', 'conversation.slug']).select(accessColumns);

const accessOf = (row: {
  id: number;
  slug: string;
  anyone_can_post: boolean;
  allow_anonymous_messages: boolean;
  allow_search_engines: boolean;
  member_ids: number[];
  passes_after_ms: string | null;
}): ConversationAccess => ({
  id: row.id,
  slug: row.slug,
  ...settingsOf(row),
  memberIds: row.member_ids.map(Number),
  passesValidAfter: row.passes_after_ms === null ? null : Number(row.passes_after_ms),
});

/** Messages a thread's page shows at most. */
const THREAD_MESSAGES = 500;

/**
 * A thread of a conversation, by any of its messages: its first message, then its replies in
 * order (not hidden; notes only for the team).
 */
const THREAD = statement(
  'site_thread',
  db
    .with('t', (q) =>
      q
        .selectFrom('message')
        .select(sql<number>`coalesce(parent_id, id)`.as('root'))
        .where('account_id', '=', slot<number>('account'))
        .where('conversation_id', '=', slot<number>('conversation'))
        .where('id', '=', slot<number>('message'))
        .where('hidden_at', 'is', null)
        .where(sql<boolean>`(not internal or ${team()})`),
    )
    .selectFrom('message as m')
    .innerJoin('t', (j) => j.on(sql<boolean>`m.id = t.root or m.parent_id = t.root`))
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .select(PAGE_MESSAGE_COLUMNS)
    .select('t.root')
    .where('m.account_id', '=', slot<number>('account'))
    .where('m.conversation_id', '=', slot<number>('conversation'))
    .where('m.hidden_at', 'is', null)
    .where(sql<boolean>`(not m.internal or ${team()})`)
    .orderBy(sql`m.id <> t.root`)
    .orderBy('m.created_at')
    .orderBy('m.id')
    .limit(THREAD_MESSAGES),
);

/** A shown message with its conversation's title and access. */
const MESSAGE_BY_ID = statement(
  'site_message_by_id',
  db
    .selectFrom('message as m')
    .innerJoin('conversation', (j) =>
      j.onRef('conversation.id', '=', 'm.conversation_id').onRef('conversation.account_id', '=', 'm.account_id'),
    )
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .select(PAGE_MESSAGE_COLUMNS)
    .select('conversation.title')
    .select(accessColumns)
    .select('conversation.id as conversation_id')
    .select('conversation.slug')
    .where('m.id', '=', slot<number>('message'))
    .where('m.account_id', '=', slot<number>('account'))
    .where('m.hidden_at', 'is', null),
);

/**
 * A kept recording of a message anyone but the team sees, with what deciding who may fetch it needs
 * (and whether a play of it is a receipt: its author, and whether they are on the team).
 */
const MEDIA_OF = statement(
  'site_media_of',
  db
    .selectFrom('message as m')
    .innerJoin('conversation', (j) =>
      j.onRef('conversation.id', '=', 'm.conversation_id').onRef('conversation.account_id', '=', 'm.account_id'),
    )
    .leftJoin('account_user as author', 'author.id', 'm.author_id')
    .select(['m.media_key', 'm.media_content_type', sql<string>`m.media_bytes::text`.as('media_bytes'), 'm.internal'])
    .select(['m.author_id', sql<boolean>`coalesce(author.team_role is not null, false)`.as('author_on_team')])
    .select(['conversation.id', 'conversation.slug'])
    .select(accessColumns)
    .where('m.id', '=', slot<number>('message'))
    .where('m.account_id', '=', slot<number>('account'))
    .where('m.hidden_at', 'is', null)
    .where('m.media_key', 'is not', null),
);

const ACCESS = statement(
  'site_conversation_access',
  selectAccess()
    .where('conversation.account_id', '=', slot<number>('account'))
    .where(slugKey('conversation.slug'), '=', slot<string>('slug')),
);
const ACCESS_BY_ID = statement(
  'site_conversation_access_by_id',
  selectAccess()
    .where('conversation.account_id', '=', slot<number>('account'))
    .where('conversation.id', '=', slot<number>('conversation')),
);
const ACCESS_BY_IDS = statement(
  'site_conversation_access_by_ids',
  selectAccess()
    .where('conversation.account_id', '=', slot<number>('account'))
    .where('conversation.id', '=', sql<number>`any(${slot('conversations')}::int[])`),
);

/** The conversations search engines may list: public and not opted out. */
const indexable = () =>
  db
    .selectFrom('conversation')
    .where('account_id', '=', slot<number>('account'))
    .where((eb) => eb.and([eb.ref('anyone_can_post'), eb.ref('allow_search_engines')]));

const INDEXABLE_SLUGS = statement(
  'site_indexable_slugs',
  indexable()
    .select('slug')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(slot<number>('limit'))
    .offset(slot<number>('offset')),
);

const INDEXABLE_SLUGS_OLDEST = statement(
  'site_indexable_slugs_oldest',
  indexable()
    .select('slug')
    .orderBy('created_at')
    .orderBy('id')
    .limit(slot<number>('limit'))
    .offset(slot<number>('offset')),
);

const INDEXABLE_COUNT = statement('site_indexable_count', indexable().select(sql<number>`count(*)::int`.as('n')));

/** The account's change mark (change-marks.ts). */
const CHANGE_MARK = statement('site_change_mark', changeMarkOf(slot<number>('account')));

/** Hosts remembered at most this many; past it the cache starts again (hosts are few, requests many). */
const HOST_CACHE_MAX = 10_000;

export class PgSiteStore implements SiteStore {
  private readonly em: EntityManager;
  private readonly hostCacheMs: number;
  private readonly hosts = new Map<string, { account: SiteAccount; until: number }>();

  /**
   * `hostCacheMs`: how long an account found by its host is remembered, saving every page a
   * statement; a host moved with `account set-host` reaches each process within that time. Only
   * found accounts are remembered, so a new account's host works at once.
   */
  constructor(em: EntityManager, caching: { hostCacheMs?: number } = {}) {
    this.em = em;
    this.hostCacheMs = caching.hostCacheMs ?? 0;
  }

  async accountByHost(origins: readonly string[]): Promise<SiteAccount | null> {
    if (origins.length === 0) return null;
    const key = origins.join(' ');
    const now = Date.now();
    const cached = this.hosts.get(key);
    if (cached && cached.until > now) return cached.account;
    const [row] = await run(this.em, ACCOUNT_BY_HOST, { origins });
    if (row && this.hostCacheMs > 0) {
      if (this.hosts.size >= HOST_CACHE_MAX) this.hosts.clear();
      this.hosts.set(key, { account: row, until: now + this.hostCacheMs });
    }
    return row ?? null;
  }

  async conversationPage(
    account: number,
    conversation: number,
    window: MessageWindow,
    team: boolean,
  ): Promise<ConversationPageRecord | null> {
    const [row] = await run(this.em, PAGE, {
      account,
      conversation,
      team,
      start: window.start,
      size: window.size,
      earlier: window.earlierIds,
      preview: window.threadPreview,
    });
    if (!row) return null;
    const threads = new Map<number, ThreadPreview>();
    for (const r of row.thread_replies) {
      if (r.parent_id === null) continue;
      const thread = threads.get(r.parent_id) ?? { count: r.replies, latest: [] };
      thread.latest.push(pageMessage(r));
      threads.set(r.parent_id, thread);
    }
    const previewed = new Set(row.thread_replies.map((r) => r.id));
    return {
      id: row.id,
      title: row.title,
      slug: row.slug,
      ...settingsOf(row),
      createdAt: BigInt(row.created_us),
      users: row.users,
      tags: row.tags,
      messages: row.messages.map(pageMessage),
      threads,
      replyIds: row.reply_ids.map(Number).filter((id) => !previewed.has(id)),
      messageCount: row.total,
      start: row.start,
      firstText: row.first_text,
      earlierIds: row.earlier_ids.map(Number),
      triage: {
        state: isConversationState(row.state) ? row.state : 'open',
        source: isConversationSource(row.source) ? row.source : 'api',
        assigneeId: row.assignee_id,
        archived: row.archived,
      },
    };
  }

  async thread(account: number, conversation: number, messageId: number, team: boolean) {
    const rows = await run(this.em, THREAD, { account, conversation, message: messageId, team });
    // Its first message hidden (or a note, for anyone off the team): no thread to show.
    if (rows[0]?.id !== rows[0]?.root || rows.length === 0) return null;
    return rows.map(pageMessage);
  }

  async messageById(account: number, messageId: number): Promise<MessagePageRecord | null> {
    const [row] = await run(this.em, MESSAGE_BY_ID, { account, message: messageId });
    if (!row) return null;
    return {
      conversation: { ...accessOf({ ...row, id: row.conversation_id }), title: row.title },
      message: pageMessage(row),
    };
  }

  async conversationAccess(account: number, slug: string): Promise<ConversationAccess | null> {
    const [row] = await run(this.em, ACCESS, { account, slug });
    return row ? accessOf(row) : null;
  }

  async conversationAccessById(account: number, conversation: number): Promise<ConversationAccess | null> {
    const [row] = await run(this.em, ACCESS_BY_ID, { account, conversation });
    return row ? accessOf(row) : null;
  }

  async conversationAccessByIds(account: number, conversations: readonly number[]): Promise<ConversationAccess[]> {
    if (conversations.length === 0) return [];
    const rows = await run(this.em, ACCESS_BY_IDS, { account, conversations: [...conversations] });
    return rows.map(accessOf);
  }

  async mediaOf(account: number, messageId: number): Promise<MessageMedia | null> {
    const [row] = await run(this.em, MEDIA_OF, { account, message: messageId });
    if (!row?.media_key || !row.media_content_type) return null;
    return {
      conversation: accessOf(row),
      key: row.media_key,
      contentType: row.media_content_type,
      bytes: Number(row.media_bytes),
      internal: row.internal,
      authorId: row.author_id,
      authorOnTeam: row.author_on_team,
    };
  }

  async indexableSlugs(account: number, limit: number, order: { oldestFirst?: boolean; offset?: number } = {}) {
    const statement = order.oldestFirst ? INDEXABLE_SLUGS_OLDEST : INDEXABLE_SLUGS;
    const rows = await run(this.em, statement, { account, limit, offset: order.offset ?? 0 });
    return rows.map((r) => r.slug);
  }

  async indexableCount(account: number): Promise<number> {
    const [row] = await run(this.em, INDEXABLE_COUNT, { account });
    return row?.n ?? 0;
  }

  async changeMark(account: number): Promise<string> {
    const [row] = await run(this.em, CHANGE_MARK, { account });
    return row?.mark ?? '0';
  }
}
