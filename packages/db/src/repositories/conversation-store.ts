import type {
  ConversationRecord,
  ConversationStore,
  LookupCriteria,
  MessageRecord,
  NewConversation,
  OnceOnly,
  OnceOnlyInsert,
  PageWindow,
  StoredConversation,
  TagRecord,
  UserRecord,
  WorkflowRecord,
} from '@convo/domain';
import { SlugTakenError, titleKey } from '@convo/domain';
import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { Conversation, ConversationMember, SLUG_UNIQUE_INDEX } from '../entities/index.ts';
import { sha256 } from '../tokens.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { fromJson, query } from './sql.ts';

/*
 * One statement per read, whatever the page holds: members, tags and messages come back as JSON
 * arrays from correlated subqueries that each walk an index to just the rows they return.
 */
const COLUMNS = `
  c.id, c.title, c.slug, c.anyone_can_post, c.allow_anonymous_messages, c.allow_search_engines,
  c.via_primary_intake_page, c.intake_page_id, c.workflow,
  (extract(epoch from c.created_at) * 1000000)::bigint::text as created_us,
  coalesce((
    select json_agg(json_build_object('id', u.id, 'email', u.email, 'name', u.name) order by u.id)
    from conversation_member cm join account_user u on u.id = cm.user_id
    where cm.conversation_id = c.id and cm.account_id = c.account_id
  ), '[]'::json) as users,
  coalesce((
    select json_agg(json_build_object('id', t.id, 'name', t.name) order by t.id)
    from conversation_tag ct join tag t on t.id = ct.tag_id
    where ct.conversation_id = c.id and ct.account_id = c.account_id
  ), '[]'::json) as tags,
  coalesce((
    select json_agg(json_build_object(
      'id', m.id, 'type', m.message_type, 'duration', m.recorded_duration_seconds,
      'anonymous', m.anonymous, 'author_id', u.id, 'author_name', u.name, 'author_email', u.email,
      'text', m.text, 'media', m.download_media_url) order by m.created_at, m.id)
    from message m left join account_user u on u.id = m.author_id
    where m.conversation_id = c.id and m.account_id = c.account_id
  ), '[]'::json) as messages`;

const RECENT = 'order by created_at desc, id desc limit 1';
const LATEST = `(select id from conversation where account_id = $1 ${RECENT})`;

/** The four shapes of get_conversation: no key, title, slug, or both (both must match). $1 is the account. */
function findOneStatement(name: string, conditions: string[]): Prepared {
  const target =
    conditions.length === 0
      ? LATEST
      : `coalesce((select id from conversation where account_id = $1 and ${conditions.join(' and ')} ${RECENT}), ${LATEST})`;
  return { name, text: `select ${COLUMNS} from conversation c where c.account_id = $1 and c.id = ${target}` };
}

const FIND_ONE = {
  latest: findOneStatement('conversation_latest', []),
  title: findOneStatement('conversation_by_title', ['title_key = $2']),
  slug: findOneStatement('conversation_by_slug', ['lower(slug) = $2']),
  both: findOneStatement('conversation_by_title_and_slug', ['title_key = $2', 'lower(slug) = $3']),
};

/*
 * The page's ids come from an index-only scan of (account_id, created_at desc, id desc), so the
 * rows skipped by a deep page's offset are read from the index only, never from the table. One id
 * past the page is read too, to tell whether another page follows; its row is not built.
 * $1 account, $2 page size, $3 offset.
 */
const LIST_PAGE: Prepared = {
  name: 'conversation_page',
  text: `
  select ${COLUMNS}, p.total > $2 as has_more
  from (
    select id, created_at, row_number() over (order by created_at desc, id desc) as rn, count(*) over () as total
    from (select id, created_at from conversation where account_id = $1 order by created_at desc, id desc
          limit $2 + 1 offset $3) w
  ) p
  join conversation c on c.id = p.id
  where p.rn <= $2
  order by p.created_at desc, p.id desc`,
};

interface Row {
  id: number;
  title: string;
  slug: string;
  anyone_can_post: boolean;
  allow_anonymous_messages: boolean;
  allow_search_engines: boolean;
  via_primary_intake_page: boolean;
  intake_page_id: number | null;
  workflow: unknown;
  created_us: string;
  users: unknown;
  tags: unknown;
  messages: unknown;
}

interface MessageRow {
  id: number;
  type: string;
  duration: number;
  anonymous: boolean;
  author_id: number | null;
  author_name: string | null;
  author_email: string | null;
  text: string;
  media: string | null;
}

function message(m: MessageRow): MessageRecord {
  return {
    id: m.id,
    messageType: m.type,
    recordedDurationSeconds: m.duration,
    author:
      m.anonymous || m.author_id === null
        ? { anonymous: true }
        : { anonymous: false, id: m.author_id, name: m.author_name ?? '', email: m.author_email ?? '' },
    text: m.text,
    downloadMediaUrl: m.media,
  };
}

function record(row: Row): ConversationRecord {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    anyoneCanPost: row.anyone_can_post,
    allowAnonymousMessages: row.allow_anonymous_messages,
    allowSearchEngines: row.allow_search_engines,
    viaPrimaryIntakePage: row.via_primary_intake_page,
    intakePageId: row.intake_page_id,
    workflow: row.workflow === null ? null : fromJson<WorkflowRecord>(row.workflow),
    createdAt: BigInt(row.created_us),
    users: fromJson<UserRecord[]>(row.users),
    tags: fromJson<TagRecord[]>(row.tags),
    messages: fromJson<MessageRow[]>(row.messages).map(message),
  };
}

export class MikroConversationStore implements ConversationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async findOne(accountId: number, criteria: LookupCriteria): Promise<ConversationRecord | null> {
    const { titleKey: title, slugKey: slug } = criteria;
    const [row] =
      title !== undefined && slug !== undefined
        ? await runPrepared<Row>(this.em, FIND_ONE.both, [accountId, title, slug])
        : title !== undefined
          ? await runPrepared<Row>(this.em, FIND_ONE.title, [accountId, title])
          : slug !== undefined
            ? await runPrepared<Row>(this.em, FIND_ONE.slug, [accountId, slug])
            : await runPrepared<Row>(this.em, FIND_ONE.latest, [accountId]);
    return row ? record(row) : null;
  }

  async listPage(accountId: number, window: PageWindow): Promise<{ records: ConversationRecord[]; hasMore: boolean }> {
    const { limit, offset } = window;
    const rows = await runPrepared<Row & { has_more: boolean }>(this.em, LIST_PAGE, [accountId, limit, offset]);
    return { records: rows.map(record), hasMore: rows[0]?.has_more === true };
  }

  /**
   * One statement, one round trip: the conversation row (as the entity's query builder writes it)
   * and its members, inserted together by a CTE. A single statement is atomic, so no transaction
   * is opened; as a named prepared statement it is planned once per connection. Four round trips
   * (begin, two inserts, commit) were the largest cost of create: each socket write wakes
   * PostgreSQL on the cores the server shares with it.
   */
  async insert(accountId: number, c: NewConversation): Promise<StoredConversation> {
    const { statement, params } = insertStatement(this.em, accountId, c);
    try {
      const [row] = await runPrepared<{ id: number }>(this.em, statement, params);
      return { id: (row as { id: number }).id };
    } catch (e) {
      if (isSlugTaken(e)) throw new SlugTakenError();
      throw e;
    }
  }

  async insertOnce(accountId: number, c: NewConversation, once: OnceOnly): Promise<OnceOnlyInsert> {
    const fingerprint = sha256(once.request);
    return this.em.transactional(async (tx): Promise<OnceOnlyInsert> => {
      // A key older than its retention is free again.
      await query(
        tx,
        `delete from idempotency_key where account_id = ? and key = ? and created_at < now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours'`,
        [accountId, once.key],
      );
      // Waits while another transaction holds the same key, then finds it taken.
      const claimed = await query(
        tx,
        'insert into idempotency_key (account_id, key, fingerprint) values (?, ?, ?) on conflict do nothing returning key',
        [accountId, once.key, fingerprint],
      );
      if (claimed.length === 0) {
        const [used] = await query<{ fingerprint: string; body: unknown }>(
          tx,
          'select fingerprint, body from idempotency_key where account_id = ? and key = ?',
          [accountId, once.key],
        );
        if (!used || used.fingerprint !== fingerprint || used.body === null) return { kind: 'key_reused' };
        return { kind: 'replay', answer: fromJson(used.body) };
      }
      const stored = await insertConversation(tx, accountId, c);
      await query(tx, 'update idempotency_key set body = ? where account_id = ? and key = ?', [
        JSON.stringify(once.answer(stored)),
        accountId,
        once.key,
      ]);
      return { kind: 'stored', stored };
    });
  }
}

let insertSql: string | undefined;
let insertPrepared: Prepared | undefined;

/** The conversation's row, in the entity's terms: both inserts write exactly this. */
const conversationData = (accountId: number, c: NewConversation) => ({
  account: accountId,
  title: c.title,
  titleKey: titleKey(c.title),
  slug: c.slug,
  anyoneCanPost: c.anyoneCanPost,
  allowAnonymousMessages: c.allowAnonymousMessages,
  allowSearchEngines: c.allowSearchEngines,
  viaPrimaryIntakePage: c.viaPrimaryIntakePage,
  intakePage: c.intakePageId,
  workflow: c.workflow,
});

/** The row as the entity's query builder writes it: columns, JSON serialisation, references. */
const conversationRow = (em: EntityManager, accountId: number, c: NewConversation) =>
  (em as SqlEntityManager).createQueryBuilder(Conversation).insert(conversationData(accountId, c)).toQuery();

/** The builder's insert, with the members' insert beside it in one statement ($n placeholders). */
function insertStatement(em: EntityManager, accountId: number, c: NewConversation) {
  const { sql, params } = conversationRow(em, accountId, c);
  if (!insertPrepared) {
    const columns = /^insert into "conversation" \(([^)]*)\)/.exec(sql)?.[1]?.split(', ') ?? [];
    const account = columns.indexOf('"account_id"') + 1;
    if (account === 0) throw new Error(`unexpected conversation insert: ${sql}`);
    let n = 0;
    const numbered = sql.replace(/\?/g, () => `$${++n}`);
    insertSql = sql;
    insertPrepared = {
      name: 'conversation_insert',
      text: `with c as (${numbered}),
        m as (insert into conversation_member (conversation_id, user_id, account_id)
              select c.id, u, $${account} from c cross join unnest($${n + 1}::int[]) as u)
        select id from c`,
    };
  }
  // Every insert names the same columns, so the statement's text never changes.
  if (sql !== insertSql) throw new Error(`conversation insert changed shape: ${sql}`);
  return { statement: insertPrepared, params: [...params, c.memberIds] };
}

const isSlugTaken = (e: unknown): boolean =>
  (e instanceof UniqueConstraintViolationException && e.message.includes(SLUG_UNIQUE_INDEX)) ||
  (e instanceof Error &&
    (e as { code?: unknown }).code === '23505' &&
    ((e as { constraint?: unknown }).constraint === SLUG_UNIQUE_INDEX || e.message.includes(SLUG_UNIQUE_INDEX)));

/** How long an Idempotency-Key is remembered (at least: expired keys are purged hourly, and on reuse). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

/**
 * The insert inside insertOnce's transaction (prepared statements run outside transactions). A
 * refused insert fails that whole transaction, key claim included, which is what a refused create
 * must leave behind: nothing.
 */
async function insertConversation(
  tx: EntityManager,
  accountId: number,
  c: NewConversation,
): Promise<StoredConversation> {
  try {
    const id = (await tx.insert(Conversation, conversationData(accountId, c))) as number;
    if (c.memberIds.length > 0) {
      await tx.insertMany(
        ConversationMember,
        c.memberIds.map((user) => ({ conversation: id, user, account: accountId })),
      );
    }
    return { id };
  } catch (e) {
    if (isSlugTaken(e)) throw new SlugTakenError();
    throw e;
  }
}

/** Deletes Idempotency-Keys past their retention; returns how many. */
export async function purgeIdempotencyKeys(em: EntityManager): Promise<number> {
  const rows = await query(
    em,
    `delete from idempotency_key where created_at < now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours' returning 1`,
  );
  return rows.length;
}
