import type {
  ConversationRecord,
  ConversationSettings,
  LookupCriteria,
  MessageRecord,
  PageWindow,
  TagRecord,
  UserRecord,
  WorkflowCopy,
} from '@convo/domain';
import { isMessageType, SLUG_KEY_SQL } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Prepared, runPrepared } from './prepared.ts';
import { fromJson } from './sql.ts';

/** A conversation's three settings as every read selects them (`SETTINGS_COLUMNS`). */
export interface SettingsRow {
  anyone_can_post: boolean;
  allow_anonymous_messages: boolean;
  allow_search_engines: boolean;
}

/** The settings columns of `conversation c` (an account's defaults are selected under the same names). */
export const SETTINGS_COLUMNS = 'c.anyone_can_post, c.allow_anonymous_messages, c.allow_search_engines';

/** The one place the settings' columns become the domain's names. */
export const settingsOf = (row: SettingsRow): ConversationSettings => ({
  anyoneCanPost: row.anyone_can_post,
  allowAnonymousMessages: row.allow_anonymous_messages,
  allowSearchEngines: row.allow_search_engines,
});

/*
 * One statement per read, whatever the page holds: members, tags and messages come back as JSON
 * arrays from correlated subqueries that each walk an index to just the rows they return.
 */
/** A conversation's members, as a JSON array (`c` is the conversation). */
export const usersColumn = `coalesce((
    select json_agg(json_build_object('id', u.id, 'email', u.email, 'name', u.name) order by u.id)
    from conversation_member cm join account_user u on u.id = cm.user_id
    where cm.conversation_id = c.id and cm.account_id = c.account_id
  ), '[]'::json) as users`;

/** A conversation's tags, as a JSON array. */
export const tagsColumn = `coalesce((
    select json_agg(json_build_object('id', t.id, 'name', t.name) order by t.id)
    from conversation_tag ct join tag t on t.id = ct.tag_id
    where ct.conversation_id = c.id and ct.account_id = c.account_id
  ), '[]'::json) as tags`;

/**
 * A conversation's messages (those `where` picks, all by default), oldest first, as a JSON array;
 * `forPage`, each carries what pages show beside the API's fields (PAGE_MESSAGE_EXTRAS).
 */
export const messagesColumn = (where = 'true', forPage = true) => `coalesce((
    select json_agg(json_build_object(
      'id', m.id, 'type', m.message_type, 'duration', m.recorded_duration_seconds,
      'anonymous', m.anonymous, 'author_id', u.id, 'author_name', u.name, 'author_email', u.email,
      'text', m.text, 'media', m.download_media_url, 'hosted', m.media_key is not null${forPage ? PAGE_MESSAGE_EXTRAS : ''}) order by m.created_at, m.id)
    from message m left join account_user u on u.id = m.author_id
    where m.conversation_id = c.id and m.account_id = c.account_id and m.hidden_at is null and ${where}
  ), '[]'::json) as messages`;

/** The columns of one conversation as the API answers it. */
export const conversationColumns = () => `
  c.id, c.title, c.slug, ${SETTINGS_COLUMNS},
  c.via_primary_intake_page, c.intake_page_id, c.workflow,
  (extract(epoch from c.created_at) * 1000000)::bigint::text as created_us,
  ${usersColumn}, ${tagsColumn}, ${messagesColumn('true', false)}`;

/**
 * What a page shows of a message beyond the API's fields: its time in epoch microseconds, as text
 * (JSON numbers would lose precision), its author's place on the account's team, and the name an
 * unconfirmed start was given.
 */
const PAGE_MESSAGE_EXTRAS = `, 'created_us', (extract(epoch from m.created_at) * 1000000)::bigint::text, 'author_team', u.team_role, 'claimed_name', m.claimed_name`;

const COLUMNS = conversationColumns();

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
  slug: findOneStatement('conversation_by_slug', [`${SLUG_KEY_SQL('slug')} = $2`]),
  both: findOneStatement('conversation_by_title_and_slug', ['title_key = $2', `${SLUG_KEY_SQL('slug')} = $3`]),
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

export interface Row extends SettingsRow {
  id: number;
  title: string;
  slug: string;
  via_primary_intake_page: boolean;
  intake_page_id: number | null;
  workflow: unknown;
  created_us: string;
  users: unknown;
  tags: unknown;
  messages: unknown;
}

export interface MessageRow {
  id: number;
  type: string;
  duration: number;
  anonymous: boolean;
  author_id: number | null;
  author_name: string | null;
  author_email: string | null;
  text: string;
  media: string | null;
  hosted: boolean;
}

export function message(m: MessageRow): MessageRecord {
  return {
    id: m.id,
    // The table's check holds the four types; anything else would be a row written around it.
    messageType: isMessageType(m.type) ? m.type : 'text',
    recordedDurationSeconds: m.duration,
    author:
      m.anonymous || m.author_id === null
        ? { anonymous: true }
        : { anonymous: false, id: m.author_id, name: m.author_name ?? '', email: m.author_email ?? '' },
    text: m.text,
    downloadMediaUrl: m.media,
    hostedMedia: m.hosted,
  };
}

function record(row: Row): ConversationRecord {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    ...settingsOf(row),
    viaPrimaryIntakePage: row.via_primary_intake_page,
    intakePageId: row.intake_page_id,
    workflow: row.workflow === null ? null : fromJson<WorkflowCopy>(row.workflow),
    createdAt: BigInt(row.created_us),
    users: fromJson<UserRecord[]>(row.users),
    tags: fromJson<TagRecord[]>(row.tags),
    messages: fromJson<MessageRow[]>(row.messages).map(message),
  };
}

/** A conversation row as the domain's record (for readers beyond this module's statements). */
export const recordFromRow = (row: Row): ConversationRecord => record(row);

export async function findOne(
  em: EntityManager,
  accountId: number,
  criteria: LookupCriteria,
): Promise<ConversationRecord | null> {
  const { titleKey: title, slugKey: slug } = criteria;
  const [row] =
    title !== undefined && slug !== undefined
      ? await runPrepared<Row>(em, FIND_ONE.both, [accountId, title, slug])
      : title !== undefined
        ? await runPrepared<Row>(em, FIND_ONE.title, [accountId, title])
        : slug !== undefined
          ? await runPrepared<Row>(em, FIND_ONE.slug, [accountId, slug])
          : await runPrepared<Row>(em, FIND_ONE.latest, [accountId]);
  return row ? record(row) : null;
}

export async function listPage(
  em: EntityManager,
  accountId: number,
  window: PageWindow,
): Promise<{ records: ConversationRecord[]; hasMore: boolean }> {
  const { limit, offset } = window;
  const rows = await runPrepared<Row & { has_more: boolean }>(em, LIST_PAGE, [accountId, limit, offset]);
  return { records: rows.map(record), hasMore: rows[0]?.has_more === true };
}
