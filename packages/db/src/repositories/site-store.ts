import type {
  ConversationAccess,
  ConversationPageRecord,
  MessageMedia,
  MessagePageRecord,
  MessageWindow,
  PageMessageRecord,
  SiteAccount,
  SiteStore,
  TagRecord,
  UserRecord,
} from '@convo/domain';
import { isTeamRole, SLUG_KEY_SQL } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { changeMarkSql } from './change-marks.ts';
import {
  type MessageRow,
  message,
  messagesColumn,
  type Row,
  SETTINGS_COLUMNS,
  type SettingsRow,
  settingsOf,
  tagsColumn,
  usersColumn,
} from './conversation-reads.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { fromJson } from './sql.ts';

/*
 * The reads of an account's own site (its conversation pages, embeds and robots.txt): each one
 * statement, each scoped to the account the request's host names.
 */

/** Where two accounts share a host (only possible for accounts made before hosts were unique), the first wins. */
const ACCOUNT_BY_HOST: Prepared = {
  name: 'site_account_by_host',
  text: 'select id, key, name, host from account where host = any($1::text[]) order by id limit 1',
};

/*
 * One page of a conversation: its head, the window of messages from position $3 (null: the last
 * $4), the ids of up to $5 messages before the window, its message count and first text. Positions
 * are taken along (created_at, id), the index message_conversation_order, so no page reads more
 * rows of the table than it shows. $1 account, $2 conversation.
 */
const PAGE: Prepared = {
  name: 'site_conversation_page',
  text: `
  with n as (select count(*)::int as total from message where conversation_id = $2 and account_id = $1 and hidden_at is null),
  w as (select coalesce($3::int, greatest(0, n.total - $4::int)) as start, n.total from n)
  select c.id, c.title, c.slug, ${SETTINGS_COLUMNS},
    (extract(epoch from c.created_at) * 1000000)::bigint::text as created_us,
    ${usersColumn}, ${tagsColumn}, w.total, w.start,
    (select text from message where conversation_id = c.id and account_id = c.account_id and hidden_at is null
     order by created_at, id limit 1) as first_text,
    ${messagesColumn(`m.id in (select id from message where conversation_id = c.id and account_id = c.account_id
       and hidden_at is null order by created_at, id offset w.start limit $4)`)},
    coalesce((select array_agg(e.id order by e.created_at, e.id) from (
       select id, created_at from message where conversation_id = c.id and account_id = c.account_id and hidden_at is null
       order by created_at, id offset greatest(0, w.start - $5::int) limit least(w.start, $5::int)) e), '{}') as earlier_ids
  from conversation c, w
  where c.account_id = $1 and c.id = $2 and (w.start < w.total or w.start = 0)`,
};

/**
 * Who may see a conversation `c`: its settings, members, and since when its starting devices'
 * passes open it (milliseconds; null: every pass not past its lifetime). Mapped by `accessOf`.
 */
const PASSES_AFTER_COLUMN = '(extract(epoch from c.passes_valid_after) * 1000)::bigint::text as passes_after_ms';
const ACCESS_COLUMNS = `c.id, c.slug, ${SETTINGS_COLUMNS}, ${PASSES_AFTER_COLUMN},
    coalesce((select array_agg(cm.user_id) from conversation_member cm
              where cm.conversation_id = c.id and cm.account_id = c.account_id), '{}') as member_ids`;

const passesAfter = (row: { passes_after_ms: string | null }) =>
  row.passes_after_ms === null ? null : Number(row.passes_after_ms);

type AccessRow = SettingsRow & { id: number; slug: string; member_ids: number[]; passes_after_ms: string | null };

const accessOf = (row: AccessRow): ConversationAccess => ({
  id: row.id,
  slug: row.slug,
  ...settingsOf(row),
  memberIds: row.member_ids.map(Number),
  passesValidAfter: passesAfter(row),
});

const MESSAGE_BY_ID: Prepared = {
  name: 'site_message_by_id',
  text: `
  select m.id, m.message_type as type, m.recorded_duration_seconds as duration, m.anonymous,
    u.id as author_id, u.name as author_name, u.email as author_email, u.team_role as author_team, m.claimed_name,
    m.text, m.download_media_url as media, m.media_key is not null as hosted,
    (extract(epoch from m.created_at) * 1000000)::bigint::text as created_us,
    c.id as conversation_id, c.title, c.slug, ${SETTINGS_COLUMNS}, ${PASSES_AFTER_COLUMN},
    coalesce((select array_agg(cm.user_id) from conversation_member cm
              where cm.conversation_id = c.id and cm.account_id = c.account_id), '{}') as member_ids
  from message m
  join conversation c on c.id = m.conversation_id and c.account_id = m.account_id
  left join account_user u on u.id = m.author_id
  where m.id = $2 and m.account_id = $1 and m.hidden_at is null`,
};

/** A kept recording of a message anyone but the team sees, with what deciding who may fetch it needs. */
const MEDIA_OF: Prepared = {
  name: 'site_media_of',
  text: `
  select m.media_key, m.media_content_type, m.media_bytes::text as media_bytes, ${ACCESS_COLUMNS}
  from message m
  join conversation c on c.id = m.conversation_id and c.account_id = m.account_id
  where m.id = $2 and m.account_id = $1 and m.hidden_at is null and m.media_key is not null`,
};

/** Who may see a conversation (`which` picks it, by $2), and its slug. */
const accessSql = (which: string) =>
  `select ${ACCESS_COLUMNS} from conversation c where c.account_id = $1 and ${which}`;

const ACCESS: Prepared = { name: 'site_conversation_access', text: accessSql(`${SLUG_KEY_SQL('c.slug')} = $2`) };
const ACCESS_BY_ID: Prepared = { name: 'site_conversation_access_by_id', text: accessSql('c.id = $2') };

const INDEXABLE = 'where account_id = $1 and anyone_can_post and allow_search_engines';

const INDEXABLE_SLUGS: Prepared = {
  name: 'site_indexable_slugs',
  text: `select slug from conversation ${INDEXABLE} order by created_at desc, id desc limit $2 offset $3`,
};

const INDEXABLE_SLUGS_OLDEST: Prepared = {
  name: 'site_indexable_slugs_oldest',
  text: `select slug from conversation ${INDEXABLE} order by created_at, id limit $2 offset $3`,
};

const INDEXABLE_COUNT: Prepared = {
  name: 'site_indexable_count',
  text: `select count(*)::int as n from conversation ${INDEXABLE}`,
};

const CHANGE_MARK: Prepared = { name: 'site_change_mark', text: `select ${changeMarkSql('$1')} as mark` };

type PageMessageRow = MessageRow & { created_us: string; author_team: string | null; claimed_name: string | null };

const pageMessage = (m: PageMessageRow): PageMessageRecord => ({
  ...message(m),
  createdAt: BigInt(m.created_us),
  authorTeamRole: !m.anonymous && isTeamRole(m.author_team) ? m.author_team : null,
  claimedName: m.claimed_name ?? null,
});

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
    const [row] = await runPrepared<SiteAccount>(this.em, ACCOUNT_BY_HOST, [origins]);
    if (row && this.hostCacheMs > 0) {
      if (this.hosts.size >= HOST_CACHE_MAX) this.hosts.clear();
      this.hosts.set(key, { account: row, until: now + this.hostCacheMs });
    }
    return row ?? null;
  }

  async conversationPage(
    accountId: number,
    conversationId: number,
    window: MessageWindow,
  ): Promise<ConversationPageRecord | null> {
    const [row] = await runPrepared<
      Omit<Row, 'via_primary_intake_page' | 'intake_page_id' | 'workflow'> & {
        total: number;
        start: number;
        first_text: string | null;
        earlier_ids: number[];
      }
    >(this.em, PAGE, [accountId, conversationId, window.start, window.size, window.earlierIds]);
    if (!row) return null;
    return {
      id: row.id,
      title: row.title,
      slug: row.slug,
      ...settingsOf(row),
      createdAt: BigInt(row.created_us),
      users: fromJson<UserRecord[]>(row.users),
      tags: fromJson<TagRecord[]>(row.tags),
      messages: fromJson<PageMessageRow[]>(row.messages).map(pageMessage),
      messageCount: row.total,
      start: row.start,
      firstText: row.first_text,
      earlierIds: row.earlier_ids.map(Number),
    };
  }

  async messageById(accountId: number, messageId: number): Promise<MessagePageRecord | null> {
    const [row] = await runPrepared<
      PageMessageRow &
        SettingsRow & {
          conversation_id: number;
          title: string;
          slug: string;
          member_ids: number[];
          passes_after_ms: string | null;
        }
    >(this.em, MESSAGE_BY_ID, [accountId, messageId]);
    if (!row) return null;
    return {
      conversation: {
        id: row.conversation_id,
        title: row.title,
        slug: row.slug,
        ...settingsOf(row),
        memberIds: row.member_ids.map(Number),
        passesValidAfter: passesAfter(row),
      },
      message: pageMessage(row),
    };
  }

  conversationAccess(accountId: number, slugKey: string): Promise<ConversationAccess | null> {
    return this.access(ACCESS, accountId, slugKey);
  }

  conversationAccessById(accountId: number, conversationId: number): Promise<ConversationAccess | null> {
    return this.access(ACCESS_BY_ID, accountId, conversationId);
  }

  private async access(statement: Prepared, accountId: number, which: unknown): Promise<ConversationAccess | null> {
    const [row] = await runPrepared<AccessRow>(this.em, statement, [accountId, which]);
    return row ? accessOf(row) : null;
  }

  async mediaOf(accountId: number, messageId: number): Promise<MessageMedia | null> {
    const [row] = await runPrepared<AccessRow & { media_key: string; media_content_type: string; media_bytes: string }>(
      this.em,
      MEDIA_OF,
      [accountId, messageId],
    );
    if (!row) return null;
    return {
      conversation: accessOf(row),
      key: row.media_key,
      contentType: row.media_content_type,
      bytes: Number(row.media_bytes),
    };
  }

  async indexableSlugs(accountId: number, limit: number, order: { oldestFirst?: boolean; offset?: number } = {}) {
    const statement = order.oldestFirst ? INDEXABLE_SLUGS_OLDEST : INDEXABLE_SLUGS;
    const rows = await runPrepared<{ slug: string }>(this.em, statement, [accountId, limit, order.offset ?? 0]);
    return rows.map((r) => r.slug);
  }

  async indexableCount(accountId: number): Promise<number> {
    const [row] = await runPrepared<{ n: number }>(this.em, INDEXABLE_COUNT, [accountId]);
    return row?.n ?? 0;
  }

  async changeMark(accountId: number): Promise<string> {
    const [row] = await runPrepared<{ mark: string }>(this.em, CHANGE_MARK, [accountId]);
    return row?.mark ?? '0';
  }
}
