import type {
  AccountContext,
  ConversationChanges,
  ConversationListView,
  ConversationRecord,
  ConversationSettings,
  ConversationView,
  LookupCriteria,
  MessageRecord,
  PageWindow,
  UpdatedConversationView,
  WireJson,
} from '@convo/domain';
import { isMessageType, REACTIONS, SLUG_KEY_SQL } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type ExpressionBuilder, type InferResult, type RawBuilder, type Selectable, sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { changeMark } from './change-marks.ts';
import { column, type Database, db, run, slot, statement } from './query.ts';
import { query } from './sql.ts';
import { makeTags } from './tags.ts';
import { webhookEvents } from './webhook-outbox.ts';

/** The conversation a fragment reads beside (the outer query's `conversation`). */
type OnConversation = ExpressionBuilder<Database, 'conversation'>;

/** A conversation's three settings as every read selects them. */
export const SETTINGS = ['anyone_can_post', 'allow_anonymous_messages', 'allow_search_engines'] as const;

/** The settings' columns of the outer query's `conversation`. */
export const SETTINGS_OF_CONVERSATION = SETTINGS.map((s) => `conversation.${s}` as const);

/** A row with the settings' columns (a conversation's, or an account's defaults under the same names). */
export type SettingsRow = Pick<Selectable<Database['conversation']>, (typeof SETTINGS)[number]>;

/** The one place the settings' columns become the domain's names. */
export const settingsOf = (row: SettingsRow): ConversationSettings => ({
  anyoneCanPost: row.anyone_can_post,
  allowAnonymousMessages: row.allow_anonymous_messages,
  allowSearchEngines: row.allow_search_engines,
});

/**
 * The name of the intake page conversation `c` began on (its own, or the account's primary one),
 * as SQL text over the alias `c` (the inbox's rows, the notification mails).
 */
export const intakePageNameSql = (c: string): string =>
  `(select i.name from intake_page i where i.account_id = ${c}.account_id
    and (i.id = ${c}.intake_page_id or (${c}.via_primary_intake_page and i.is_primary)) limit 1)`;

/**
 * Whether message `messageId` (SQL) started conversation `c` on an intake page: none came before
 * it. SQL text over the alias `c`.
 */
export const startedOnIntakeSql = (c: string, messageId: string): string =>
  `(${c}.source = 'intake' and not exists (select 1 from message s where s.conversation_id = ${c}.id
    and s.account_id = ${c}.account_id and s.id < ${messageId}))`;

/** A time as epoch microseconds, in text (a JSON or JavaScript number would lose precision). */
export const epochMicros = (column: string) =>
  sql<string>`(extract(epoch from ${sql.ref(column)}) * 1000000)::bigint::text`;

/** The slug as lookups compare it (the domain's ASCII-only rule; the unique index's expression). */
export const slugKey = (column: string) => sql<string>`${sql.raw(SLUG_KEY_SQL(`"${column.split('.').join('"."')}"`))}`;

/*
 * One statement per read, whatever the page holds: members, tags and messages come back as JSON
 * arrays from correlated subqueries that each walk an index to just the rows they return.
 */

/** A conversation's members, oldest account first. */
export const usersOf = (eb: OnConversation) =>
  jsonArrayFrom(
    eb
      .selectFrom('conversation_member as cm')
      .innerJoin('account_user as u', 'u.id', 'cm.user_id')
      .select(['u.id', 'u.email', 'u.name'])
      .whereRef('cm.conversation_id', '=', 'conversation.id')
      .whereRef('cm.account_id', '=', 'conversation.account_id')
      .orderBy('u.id'),
  ).as('users');

/** A conversation's tags. */
export const tagsOf = (eb: OnConversation) =>
  jsonArrayFrom(
    eb
      .selectFrom('conversation_tag as ct')
      .innerJoin('tag as t', 't.id', 'ct.tag_id')
      .select(['t.id', 't.name'])
      .whereRef('ct.conversation_id', '=', 'conversation.id')
      .whereRef('ct.account_id', '=', 'conversation.account_id')
      .orderBy('t.id'),
  ).as('tags');

/**
 * A conversation's shown messages with their authors (the `m` and `u` the columns below read):
 * not hidden, and internal notes only where `team` holds (the team's own page; never the spec's
 * operations).
 */
export const shownMessages = (eb: OnConversation, team: RawBuilder<boolean> = sql<boolean>`false`) =>
  eb
    .selectFrom('message as m')
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .whereRef('m.conversation_id', '=', 'conversation.id')
    .whereRef('m.account_id', '=', 'conversation.account_id')
    .where('m.hidden_at', 'is', null)
    .where(sql<boolean>`(not m.internal or ${team})`);

/** A message's fields as the API answers them (mapped by `message`). */
export const MESSAGE_COLUMNS = [
  'm.id',
  'm.message_type as type',
  'm.recorded_duration_seconds as duration',
  'm.anonymous',
  'u.id as author_id',
  'u.name as author_name',
  'u.email as author_email',
  'm.text',
  'm.format',
  'm.download_media_url as media',
] as const;

/**
 * A recording's columns, the same on a message and on a message template: what a template or a
 * workflow step copies from one row to another.
 */
export const RECORDING_COLUMNS = [
  'message_type',
  'recorded_duration_seconds',
  'media_key',
  'media_content_type',
  'media_bytes',
  'poster',
] as const;

/** Whether the server keeps the message's recording. */
export const hosted = sql<boolean>`${sql.ref('m.media_key')} is not null`.as('hosted');

/** A conversation's messages as the API answers them, oldest first. */
const apiMessagesOf = (eb: OnConversation) =>
  jsonArrayFrom(
    shownMessages(eb)
      .select([...MESSAGE_COLUMNS, hosted])
      .orderBy('m.created_at')
      .orderBy('m.id'),
  ).as('messages');

/** A message's columns as MESSAGE_COLUMNS and `hosted` select them. */
export interface MessageColumns {
  id: number;
  type: string;
  duration: number;
  anonymous: boolean;
  author_id: number | null;
  author_name: string | null;
  author_email: string | null;
  text: string;
  format: string;
  media: string | null;
  hosted: boolean;
}

/** The one place a message's columns become the domain's record. */
export function message(m: MessageColumns): MessageRecord {
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
    format: m.format === 'html' ? 'html' : 'text',
    downloadMediaUrl: m.media,
    hostedMedia: m.hosted,
  };
}

/** One conversation as the API answers it, from `conversation` (the caller picks which). */
export const conversationColumns = (eb: OnConversation) => [
  'conversation.id' as const,
  'conversation.title' as const,
  'conversation.slug' as const,
  ...SETTINGS_OF_CONVERSATION,
  'conversation.via_primary_intake_page' as const,
  'conversation.intake_page_id' as const,
  'conversation.workflow' as const,
  epochMicros('conversation.created_at').as('created_us'),
  usersOf(eb),
  tagsOf(eb),
  apiMessagesOf(eb),
];

/** Every conversation's read, as the statements below give it. */
const selectConversation = () => db.selectFrom('conversation').select(conversationColumns);

export type ConversationRow = InferResult<ReturnType<typeof selectConversation>>[number];

/** A conversation row as the domain's record. */
export const recordFromRow = (row: ConversationRow): ConversationRecord => ({
  id: row.id,
  title: row.title,
  slug: row.slug,
  ...settingsOf(row),
  viaPrimaryIntakePage: row.via_primary_intake_page,
  intakePageId: row.intake_page_id,
  workflow: row.workflow,
  createdAt: BigInt(row.created_us),
  users: row.users,
  tags: row.tags,
  messages: row.messages.map(message),
});

/** The account's newest conversation among those `where` picks (all: `where` absent). */
function newest(where?: (eb: OnConversation) => RawBuilder<boolean>) {
  const mine = db.selectFrom('conversation').select('id').where('account_id', '=', slot<number>('account'));
  return (where ? mine.where(where) : mine).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1);
}

/** get_conversation by no key, title, slug, or both (both must match); a key that matches nothing answers the newest. */
function findOneStatement(name: string, where?: (eb: OnConversation) => RawBuilder<boolean>) {
  return statement(
    name,
    selectConversation()
      .where('conversation.account_id', '=', slot<number>('account'))
      .where('conversation.id', '=', (eb) => (where ? eb.fn.coalesce(newest(where), newest()) : newest())),
  );
}

const titleIs = () => sql<boolean>`title_key = ${slot<string>('title')}`;
const slugIs = () => sql<boolean>`${slugKey('slug')} = ${slot<string>('slug')}`;

const FIND_ONE = {
  latest: findOneStatement('conversation_latest'),
  title: findOneStatement('conversation_by_title', titleIs),
  slug: findOneStatement('conversation_by_slug', slugIs),
  both: findOneStatement('conversation_by_title_and_slug', () => sql<boolean>`${titleIs()} and ${slugIs()}`),
};

/*
 * A page of get_conversations as its JSON, built by PostgreSQL and handed to the socket as text:
 * the domain's listedConversationView (views.ts), written in SQL, field for field and in the same
 * order (conversation-page.test.ts holds the two equal on every field). Nothing is parsed into
 * objects and serialized again; the answer checks of development and tests parse it and hold it
 * to the schema. The text is compact, as JSON.stringify writes it: each value is written by
 * to_json (PostgreSQL escapes strings as JSON.stringify does), joined by concat, which writes the
 * whole object at once (and skips a NULL, so every nullable value says `null` itself).
 */

/** A value as JSON text: `null` for NULL. */
const json = (value: RawBuilder<unknown>) => sql<string>`coalesce(to_json(${value})::text, 'null')`;
const bool = (value: RawBuilder<boolean>) => sql<string>`case when ${value} then 'true' else 'false' end`;
const col = (name: string) => sql<unknown>`${sql.ref(name)}`;

/** `[...]` of `element` over the rows `from` reads, in `order`; `[]` when none. */
const array = (element: RawBuilder<string>, order: RawBuilder<unknown>, from: RawBuilder<unknown>) =>
  sql<string>`coalesce((select '[' || string_agg(${element}, ',' order by ${order}) || ']' ${from}), '[]')`;

/** The account's address, as the URLs are built on it (urls.ts). */
const host = () => sql<string>`${slot<string>('host')}::text`;
const key = () => sql<string>`${slot<string>('key')}::text`;

/** The columns of `c` conversationJson reads: what a statement that writes `c` itself returns. */
const JSON_COLUMNS = [
  'id',
  'account_id',
  'title',
  'slug',
  'anyone_can_post',
  'allow_anonymous_messages',
  'allow_search_engines',
  'via_primary_intake_page',
  'intake_page_id',
  'workflow',
  'created_at',
  'state',
  'source',
  'assignee_id',
  'archived_at',
] as const;

/**
 * A message `m` (its author `u` left-joined, its conversation `c`) as the API shows it: the spec's
 * Message in the conversation operations (`spec`), or the messages resource's (`detail`,
 * ZMessageDetail: its template, its creation times, whether it is internal, its thread).
 */
export const messageJson = (shown: 'spec' | 'detail') => {
  const author = authorJson('u', sql<boolean>`m.anonymous`);
  // Its receipts (plays.ts): the plays counted, and the people among them by their first play.
  const playedBy = array(
    sql<string>`concat('{"id":', pu.id, ',"email":', ${json(col('pu.email'))}, ',"name":', ${json(col('pu.name'))}, '}')`,
    sql`f.first`,
    sql`from (select mp.viewer_id, min(mp.id) as first from message_play mp
                where mp.message_id = m.id and mp.viewer_id is not null group by mp.viewer_id) f
              join account_user pu on pu.id = f.viewer_id`,
  );
  return sql<string>`concat(
      '{"id":', m.id,
      ',"conversation_id":', c.id,
      ',"message_type":', ${json(col('m.message_type'))},
      ',"recorded_duration_seconds":', m.recorded_duration_seconds,
      ',"author":', ${author},
      ',"message_url":', ${json(sql`${host()} || '/c/' || c.slug || '#message-' || m.id`)},
      ',"embed_message_url":', ${json(sql`${host()} || '/embeds/messages/' || ${key()} || '/' || m.id || '&show_author=true'`)},
      ',"download_media_url":', ${json(
        sql`case when m.media_key is not null then ${host()} || '/media/' || ${key()} || '/' || m.id
          else m.download_media_url end`,
      )},
      ',"text":', ${json(col('m.text'))},
      ${
        shown === 'detail'
          ? sql`',"message_template":', case when m.template_id is null then 'null'
              else concat('{"id":', m.template_id, ',"name":', ${json(col('m.template_name'))}, '}') end,
            ',"message_created_time":"',
            to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'),
            '","message_credated_time_nice":"', to_char(m.created_at at time zone 'UTC', 'FMMonth FMDDth, YYYY HH12:MIAM'),
            ' UTC","internal":', case when m.internal then 'true' else 'false' end,
            ',"parent_message_id":', coalesce(m.parent_id::text, 'null'),
            ',"at_seconds":', coalesce(m.at_seconds::text, 'null'),
            ',"plays":', (select count(*) from message_play mp where mp.message_id = m.id),
            ',"played_by":', ${playedBy},
            ',"reactions":', ${reactionsJson(sql`m.id`)},
            ',"transcript":', ${transcriptJson()},`
          : sql``
      }
      '}')`;
};

/**
 * A message's recording's transcript as get_messages shows it (ZTranscript; its status by the
 * domain's transcriptStatus rule): null without a recording kept here; its words and captions once complete;
 * `off` for one not made while no engine is configured (the run's `transcribing`).
 */
const transcriptJson = () => {
  const complete = (value: RawBuilder<string>) =>
    sql<string>`case when s.status = 'complete' then ${value} else 'null' end`;
  return sql<string>`case when m.media_key is null then 'null' else (select concat('{"status":"', s.status,
      '","language":', ${complete(json(col('s.language')))}, ',"text":', ${complete(json(col('s.text')))},
      ',"captions_url":', ${complete(json(sql`${host()} || '/media/' || ${key()} || '/' || m.id || '/captions.vtt'`))}, '}')
    from (select case when t.status <> 'pending' then t.status
                      when ${slot<boolean>('transcribing')}::boolean then 'pending' else 'off' end as status,
                 t.language, t.text
          from (select 1) o left join transcript t on t.media_key = m.media_key) s) end`;
};

/** The reaction set's order and emoji, as SQL arrays (constants of the domain's, no quotes in them). */
const REACTION_ORDER = sql.raw(`array[${REACTIONS.map((r) => `'${r.name}'`).join(',')}]::text[]`);
const REACTION_EMOJI = sql.raw(`array[${REACTIONS.map((r) => `'${r.emoji}'`).join(',')}]::text[]`);

/**
 * A message's reactions as the API shows them (ZReaction, reactionsView): each kind someone chose,
 * in the set's order, its count and the people in it by when they reacted.
 */
export const reactionsJson = (message: RawBuilder<number>) =>
  array(
    sql<string>`concat('{"reaction":"', g.reaction, '","emoji":"', (${REACTION_EMOJI})[array_position(${REACTION_ORDER}, g.reaction::text)],
      '","count":', g.n, ',"users":', g.users, '}')`,
    sql`array_position(${REACTION_ORDER}, g.reaction::text)`,
    sql`from (select r.reaction, count(*) as n, coalesce('[' || string_agg(case when ru.id is not null then
               concat('{"id":', ru.id, ',"email":', ${json(col('ru.email'))}, ',"name":', ${json(col('ru.name'))}, '}') end,
               ',' order by r.id) || ']', '[]') as users
             from message_reaction r left join account_user ru on ru.id = r.user_id
             where r.message_id = ${message} group by r.reaction) g`,
  );

/**
 * A person (the account user `u`) as a message's `author` and a play's `viewer` show them;
 * `{"anonymous":true}` when `anonymous` holds or there is none.
 */
export const authorJson = (u: string, anonymous: RawBuilder<boolean>) => {
  const ref = (name: string) => sql.ref(`${u}.${name}`);
  return sql<string>`case when ${anonymous} or ${ref('id')} is null then '{"anonymous":true}'
    else concat('{"anonymous":false,"id":', ${ref('id')}, ',"name":', coalesce(to_json(${ref('name')})::text, '""'),
      ',"email":', coalesce(to_json(${ref('email')})::text, '""'), '}') end`;
};

/**
 * One conversation `c` as the API shows it: listed (listedConversationView), alone, with its
 * creation times (conversationView; the times as time.ts writes them), or updated: alone, then its
 * triage (ZUpdatedConversation).
 */
const conversationJson = (shown: 'listed' | 'alone' | 'updated') => {
  const url = sql<string>`${host()} || '/c/' || c.slug`;
  const users = array(
    sql<string>`concat('{"id":', u.id, ',"email":', ${json(col('u.email'))}, ',"name":', ${json(col('u.name'))}, '}')`,
    sql`u.id`,
    sql`from conversation_member cm join account_user u on u.id = cm.user_id
      where cm.conversation_id = c.id and cm.account_id = c.account_id`,
  );
  const tags = array(
    sql<string>`concat('{"id":', t.id, ',"name":', ${json(col('t.name'))}, '}')`,
    sql`t.id`,
    sql`from conversation_tag ct join tag t on t.id = ct.tag_id
      where ct.conversation_id = c.id and ct.account_id = c.account_id`,
  );
  const messages = array(
    messageJson('spec'),
    sql`m.created_at, m.id`,
    sql`from message m left join account_user u on u.id = m.author_id
      where m.conversation_id = c.id and m.account_id = c.account_id and m.hidden_at is null and not m.internal`,
  );
  const workflow = sql<string>`case when c.workflow is null then '{}'
    else concat('{"id":', coalesce((c.workflow->'id')::text, 'null'), ',"name":', coalesce((c.workflow->'name')::text, 'null'),
      ',"steps":', coalesce((c.workflow->'steps')::text, 'null'), '}') end`;
  return sql<string>`concat(
    '{"id":', c.id,
    ',"title":', ${json(col('c.title'))},
    ',"slug":', ${json(col('c.slug'))},
    ',"public":', ${bool(sql`c.anyone_can_post`)},
    ',"via_primary_intake_page":', ${bool(sql`c.via_primary_intake_page`)},
    ',"intake_page_id":', ${json(col('c.intake_page_id'))},
    ',"conversation_url":', ${json(url)},
    ',"conversation_embed_url":', ${json(sql`${host()} || '/embeds/conversations/' || ${key()} || '/' || c.slug`)},
    ',"anyone_can_post":', ${bool(sql`c.anyone_can_post`)},
    ',"allow_anonymous_messages":', ${bool(sql`c.allow_anonymous_messages`)},
    ',"allow_search_engines":', ${bool(sql`c.allow_search_engines`)},
    ',"tags":', ${tags},
    ',"users":', ${users},
    ',"messages":', ${messages},
    ',"workflow":', ${workflow},
    ${
      shown === 'listed'
        ? sql``
        : sql`',"conversation_created_time":"', to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'),
          '","conversation_credated_time_nice":"', to_char(c.created_at at time zone 'UTC', 'FMMonth FMDDth, YYYY HH12:MIAM'),
          ' UTC"',`
    }
    ${
      shown === 'updated'
        ? sql`',"state":', ${json(col('c.state'))},
          ',"source":', ${json(col('c.source'))},
          ',"assignee":', coalesce((select concat('{"id":', u.id, ',"email":', ${json(col('u.email'))},
            ',"name":', ${json(col('u.name'))}, '}') from account_user u where u.id = c.assignee_id), 'null'),
          ',"archived":', ${bool(sql`c.archived_at is not null`)},`
        : sql``
    }
    '}')`;
};

/*
 * The page's ids come from an index-only scan of (account_id, created_at desc, id desc), so the
 * rows skipped by a deep page's offset are read from the index only, never from the table. One id
 * past the page is read too, to tell whether another page follows; its row is not built.
 *
 * The page's size is written into the statement (one statement per size; the API has one): with
 * the limit a parameter, PostgreSQL judged its generic plan dearer than a page's own and planned
 * every read anew (0.4 - 1.5 ms of its CPU a page); with the limit known, it keeps the generic
 * plan after the first five reads on a connection. The offset is a parameter, which PostgreSQL
 * costs as a tenth of the account's conversations: for a deeper page the plan made for its own
 * offset is judged cheaper and made each time. The first page, by far the most read, has a
 * statement of its own without an offset, whose generic plan it keeps.
 */
const listPageStatement = (limit: number, first: boolean) =>
  statement(
    `conversation_page_${limit}${first ? '_first' : ''}`,
    db
      .selectFrom(
        db
          .selectFrom(
            db
              .selectFrom('conversation')
              .select(['id', 'created_at'])
              .where('account_id', '=', slot<number>('account'))
              .orderBy('created_at', 'desc')
              .orderBy('id', 'desc')
              .limit(sql.lit(limit + 1))
              .$if(!first, (q) => q.offset(slot<number>('offset')))
              .as('w'),
          )
          .select([
            'w.id',
            'w.created_at',
            sql<number>`row_number() over (order by w.created_at desc, w.id desc)`.as('rn'),
            sql<number>`count(*) over ()`.as('total'),
          ])
          .as('p'),
      )
      .innerJoin('conversation as c', 'c.id', 'p.id')
      .select([
        sql<string>`concat('{"conversations":[',
        string_agg(${conversationJson('listed')}, ',' order by p.created_at desc, p.id desc), ']}')`.as('json'),
        sql<number>`count(*)::int`.as('count'),
        sql<boolean>`coalesce(bool_or(p.total > ${sql.lit(limit)}), false)`.as('has_more'),
      ])
      .where('p.rn', '<=', sql.lit(limit)),
  );

/** By the page's size and whether it is the first page. */
const LIST_PAGES = new Map<string, ReturnType<typeof listPageStatement>>();

/** get_conversation's answer as JSON (the same lookups as FIND_ONE), with what the lookup matched on. */
function findOneJsonStatement(name: string, where?: (eb: OnConversation) => RawBuilder<boolean>) {
  return statement(
    name,
    db
      .selectFrom('conversation as c')
      .select([sql<string>`${conversationJson('alone')}`.as('json'), 'c.title', 'c.slug'])
      .where('c.account_id', '=', slot<number>('account'))
      .where('c.id', '=', (eb) => (where ? eb.fn.coalesce(newest(where), newest()) : newest())),
  );
}

const FIND_ONE_JSON = {
  latest: findOneJsonStatement('conversation_json_latest'),
  title: findOneJsonStatement('conversation_json_by_title', titleIs),
  slug: findOneJsonStatement('conversation_json_by_slug', slugIs),
  both: findOneJsonStatement('conversation_json_by_title_and_slug', () => sql<boolean>`${titleIs()} and ${slugIs()}`),
};

export async function findOne(
  em: EntityManager,
  account: number,
  criteria: LookupCriteria,
): Promise<ConversationRecord | null> {
  const { titleKey: title, slugKey: slug } = criteria;
  const [row] =
    title !== undefined && slug !== undefined
      ? await run(em, FIND_ONE.both, { account, title, slug })
      : title !== undefined
        ? await run(em, FIND_ONE.title, { account, title })
        : slug !== undefined
          ? await run(em, FIND_ONE.slug, { account, slug })
          : await run(em, FIND_ONE.latest, { account });
  return row ? recordFromRow(row) : null;
}

export async function findOneJson(
  em: EntityManager,
  account: Pick<AccountContext, 'id' | 'host' | 'key'>,
  criteria: LookupCriteria,
): Promise<{ view: WireJson<ConversationView>; title: string; slug: string } | null> {
  const { titleKey: title, slugKey: slug } = criteria;
  const at = { account: account.id, host: account.host, key: account.key };
  const [row] =
    title !== undefined && slug !== undefined
      ? await run(em, FIND_ONE_JSON.both, { ...at, title, slug })
      : title !== undefined
        ? await run(em, FIND_ONE_JSON.title, { ...at, title })
        : slug !== undefined
          ? await run(em, FIND_ONE_JSON.slug, { ...at, slug })
          : await run(em, FIND_ONE_JSON.latest, at);
  return row ? { view: { text: row.json }, title: row.title, slug: row.slug } : null;
}

export async function listPage(
  em: EntityManager,
  account: Pick<AccountContext, 'id' | 'host' | 'key'>,
  window: PageWindow,
): Promise<{ page: WireJson<ConversationListView>; count: number; hasMore: boolean }> {
  const first = window.offset === 0;
  const key = `${window.limit}:${first}`;
  let page = LIST_PAGES.get(key);
  if (!page) {
    page = listPageStatement(window.limit, first);
    LIST_PAGES.set(key, page);
  }
  const [row] = await run(em, page, {
    account: account.id,
    host: account.host,
    key: account.key,
    offset: window.offset,
  });
  return {
    page: { text: row?.json ?? '{"conversations":[]}' },
    count: row?.count ?? 0,
    hasMore: row?.has_more === true,
  };
}

const accountInt = () => sql<number>`${slot<number>('account')}::int`;

/**
 * One statement: the conversation's title, settings and triage, each kept as it is where none is
 * given; the account's change mark; `conversation_updated` for its subscribed endpoints; and the
 * conversation as update_conversation answers it, written from the changed row. (Its tags, when
 * given, are written first, in the same transaction: TAGS below.)
 */
const UPDATE = statement(
  'conversation_update',
  db
    .with('c', (q) =>
      q
        .updateTable('conversation')
        .set({
          title: sql<string>`coalesce(${slot('title')}::varchar, title)`,
          title_key: sql<string>`coalesce(${slot('titleKey')}::varchar, title_key)`,
          anyone_can_post: sql<boolean>`coalesce(${slot('anyoneCanPost')}::boolean, anyone_can_post)`,
          allow_anonymous_messages: sql<boolean>`coalesce(${slot('allowAnonymousMessages')}::boolean, allow_anonymous_messages)`,
          allow_search_engines: sql<boolean>`coalesce(${slot('allowSearchEngines')}::boolean, allow_search_engines)`,
          state: sql<string>`coalesce(${slot('state')}::varchar, state)`,
          assignee_id: sql<
            number | null
          >`case when ${slot('assign')}::boolean then ${slot('assignee')}::int else assignee_id end`,
          archived_at: sql<Date | null>`case ${slot('archived')}::boolean when true then coalesce(archived_at, now())
            when false then null else archived_at end`,
        })
        .where('id', '=', slot<number>('id'))
        .where('account_id', '=', accountInt())
        .returning(JSON_COLUMNS),
    )
    .with('change_mark', () => changeMark('c', accountInt()))
    .with('webhook_ev', () =>
      webhookEvents('c', accountInt(), {
        type: 'conversation_updated',
        conversation: column('c.id'),
        message: sql<null>`null::int`,
      }),
    )
    .selectFrom('c')
    .select(sql<string>`${conversationJson('updated')}`.as('json')),
);

/**
 * A conversation's tags become exactly `tags` (a JSON array of names), after makeTags made the
 * account's missing ones: the conversation's others are taken off.
 */
const SET_TAGS = `with wanted as (
    select id from tag where account_id = ? and lower(name) in (select lower(t) from jsonb_array_elements_text(?::jsonb) t)),
  target as (select id, account_id from conversation where id = ? and account_id = ?),
  removed as (delete from conversation_tag ct using target
    where ct.conversation_id = target.id and ct.account_id = target.account_id and ct.tag_id not in (select id from wanted))
  insert into conversation_tag (conversation_id, tag_id, account_id)
  select target.id, wanted.id, target.account_id from target, wanted on conflict do nothing`;

/** update_conversation's statements (UPDATE above, after TAGS when tags are given); null when the account has no such conversation. */
export async function updateConversationJson(
  em: EntityManager,
  at: Pick<AccountContext, 'id' | 'host' | 'key'>,
  id: number,
  changes: ConversationChanges,
): Promise<WireJson<UpdatedConversationView> | null> {
  const args = {
    account: at.id,
    host: at.host,
    key: at.key,
    id,
    title: changes.title?.title ?? null,
    titleKey: changes.title?.key ?? null,
    anyoneCanPost: changes.anyoneCanPost ?? null,
    allowAnonymousMessages: changes.allowAnonymousMessages ?? null,
    allowSearchEngines: changes.allowSearchEngines ?? null,
    state: changes.state ?? null,
    assign: changes.assigneeId !== undefined,
    assignee: changes.assigneeId ?? null,
    archived: changes.archived ?? null,
  };
  const { tags } = changes;
  if (tags === undefined) {
    const [row] = await run(em, UPDATE, args);
    return row ? { text: row.json } : null;
  }
  return em.transactional(async (tx) => {
    const names = JSON.stringify(tags);
    await makeTags(tx, at.id, tags);
    await query(tx, SET_TAGS, [at.id, names, id, at.id]);
    const [row] = await run(tx, UPDATE, args);
    return row ? { text: row.json } : null;
  });
}

/**
 * One statement: the conversation goes (its messages, members, tags and read marks with it, by
 * their foreign keys); the keys of the recordings its messages held are answered; the change mark
 * moves; `conversation_deleted` is recorded (its event outlives the row: it names the id).
 */
const DELETE = statement(
  'conversation_delete',
  db
    .with('c', (q) =>
      q
        .deleteFrom('conversation')
        .where('id', '=', slot<number>('id'))
        .where('account_id', '=', accountInt())
        .returning(['id']),
    )
    .with('change_mark', () => changeMark('c', accountInt()))
    .with('webhook_ev', () =>
      webhookEvents('c', accountInt(), {
        type: 'conversation_deleted',
        conversation: column('c.id'),
        message: sql<null>`null::int`,
      }),
    )
    .selectFrom('c')
    .select((eb) => [
      'c.id',
      eb.fn
        .coalesce(
          eb
            .selectFrom('message as m')
            .select(sql<string[]>`array_agg(m.media_key)`.as('keys'))
            .whereRef('m.conversation_id', '=', 'c.id')
            .where('m.account_id', '=', accountInt())
            .where('m.media_key', 'is not', null),
          sql<string[]>`'{}'`,
        )
        .as('media_keys'),
    ]),
);

/** delete_conversation's one statement; null when the account has no such conversation. */
export async function deleteConversationRow(
  em: EntityManager,
  accountId: number,
  id: number,
): Promise<{ mediaKeys: string[] } | null> {
  const [row] = await run(em, DELETE, { account: accountId, id });
  return row ? { mediaKeys: row.media_keys } : null;
}
