import type {
  ConversationPageRecord,
  MessagePageRecord,
  PageMessageRecord,
  ReplyTarget,
  SiteAccount,
  SiteStore,
  TagRecord,
  UserRecord,
} from '@convo/domain';
import { SLUG_KEY_SQL } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { conversationColumns, type MessageRow, message, type Row } from './conversation-reads.ts';
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

const BY_SLUG: Prepared = {
  name: 'site_conversation_by_slug',
  text: `select ${conversationColumns(true)} from conversation c
         where c.account_id = $1 and ${SLUG_KEY_SQL('c.slug')} = $2`,
};

const MESSAGE_BY_ID: Prepared = {
  name: 'site_message_by_id',
  text: `
  select m.id, m.message_type as type, m.recorded_duration_seconds as duration, m.anonymous,
    u.id as author_id, u.name as author_name, u.email as author_email, m.text, m.download_media_url as media,
    (extract(epoch from m.created_at) * 1000000)::bigint::text as created_us,
    c.id as conversation_id, c.title, c.slug, c.anyone_can_post, c.allow_anonymous_messages, c.allow_search_engines,
    coalesce((select array_agg(cm.user_id) from conversation_member cm
              where cm.conversation_id = c.id and cm.account_id = c.account_id), '{}') as member_ids
  from message m
  join conversation c on c.id = m.conversation_id and c.account_id = m.account_id
  left join account_user u on u.id = m.author_id
  where m.id = $2 and m.account_id = $1`,
};

const FOR_REPLY: Prepared = {
  name: 'site_conversation_for_reply',
  text: `select c.id, c.slug, c.anyone_can_post, c.allow_anonymous_messages, c.allow_search_engines,
           coalesce((select array_agg(cm.user_id) from conversation_member cm
                     where cm.conversation_id = c.id and cm.account_id = c.account_id), '{}') as member_ids
         from conversation c where c.account_id = $1 and ${SLUG_KEY_SQL('c.slug')} = $2`,
};

const INDEXABLE_SLUGS: Prepared = {
  name: 'site_indexable_slugs',
  text: `select slug from conversation
         where account_id = $1 and anyone_can_post and allow_search_engines
         order by created_at desc, id desc limit $2`,
};

type PageMessageRow = MessageRow & { created_us: string };

const pageMessage = (m: PageMessageRow): PageMessageRecord => ({ ...message(m), createdAt: BigInt(m.created_us) });

/** Hosts remembered at most this many; past it the cache starts again (hosts are few, requests many). */
const HOST_CACHE_MAX = 10_000;

export class MikroSiteStore implements SiteStore {
  private readonly em: EntityManager;
  private readonly hostCacheMs: number;
  private readonly hosts = new Map<string, { account: SiteAccount; until: number }>();

  /**
   * `hostCacheMs`: how long an account found by its host is remembered, saving every page a
   * statement; a host moved with `account set-host` reaches each process within that time. Only
   * found accounts are remembered, so a new account's host works at once.
   */
  constructor(em: EntityManager, o: { hostCacheMs?: number } = {}) {
    this.em = em;
    this.hostCacheMs = o.hostCacheMs ?? 0;
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

  async conversationBySlug(accountId: number, slugKey: string): Promise<ConversationPageRecord | null> {
    const [row] = await runPrepared<Row>(this.em, BY_SLUG, [accountId, slugKey]);
    if (!row) return null;
    return {
      id: row.id,
      title: row.title,
      slug: row.slug,
      anyoneCanPost: row.anyone_can_post,
      allowAnonymousMessages: row.allow_anonymous_messages,
      allowSearchEngines: row.allow_search_engines,
      createdAt: BigInt(row.created_us),
      users: fromJson<UserRecord[]>(row.users),
      tags: fromJson<TagRecord[]>(row.tags),
      messages: fromJson<PageMessageRow[]>(row.messages).map(pageMessage),
    };
  }

  async messageById(accountId: number, messageId: number): Promise<MessagePageRecord | null> {
    const [row] = await runPrepared<
      PageMessageRow & {
        conversation_id: number;
        title: string;
        slug: string;
        anyone_can_post: boolean;
        allow_anonymous_messages: boolean;
        allow_search_engines: boolean;
        member_ids: number[];
      }
    >(this.em, MESSAGE_BY_ID, [accountId, messageId]);
    if (!row) return null;
    return {
      conversation: {
        id: row.conversation_id,
        title: row.title,
        slug: row.slug,
        anyoneCanPost: row.anyone_can_post,
        allowAnonymousMessages: row.allow_anonymous_messages,
        allowSearchEngines: row.allow_search_engines,
        memberIds: row.member_ids.map(Number),
      },
      message: pageMessage(row),
    };
  }

  async conversationForReply(accountId: number, slugKey: string): Promise<ReplyTarget | null> {
    const [row] = await runPrepared<{
      id: number;
      slug: string;
      anyone_can_post: boolean;
      allow_anonymous_messages: boolean;
      allow_search_engines: boolean;
      member_ids: number[];
    }>(this.em, FOR_REPLY, [accountId, slugKey]);
    if (!row) return null;
    return {
      id: row.id,
      slug: row.slug,
      anyoneCanPost: row.anyone_can_post,
      allowAnonymousMessages: row.allow_anonymous_messages,
      allowSearchEngines: row.allow_search_engines,
      memberIds: row.member_ids.map(Number),
    };
  }

  async indexableSlugs(accountId: number, limit: number): Promise<string[]> {
    const rows = await runPrepared<{ slug: string }>(this.em, INDEXABLE_SLUGS, [accountId, limit]);
    return rows.map((r) => r.slug);
  }
}
