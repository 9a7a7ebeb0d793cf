import {
  type AccountContext,
  adoptCopiedSteps,
  clockMicros,
  definitionSteps,
  draftConversation,
  type IntakePageRecord,
  type MessageType,
  momentApiText,
  momentProblem,
  pendingTimers,
  type StoredMedia,
  safeMessageHtml,
  type TranscriptSegment,
  timestamptzText,
  titleKey,
  transcriptText,
  type WebhookEventType,
  type WorkflowRecord,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type RawBuilder, sql } from 'kysely';
import { SLUG_UNIQUE_INDEX } from '../../entities/index.ts';
import { markChange } from '../../repositories/change-marks.ts';
import { notifyEvents } from '../../repositories/notification-store.ts';
import { column, db, exec } from '../../repositories/query.ts';
import { saidOf } from '../../repositories/said.ts';
import { intArray, query } from '../../repositories/sql.ts';
import { webhookEvents } from '../../repositories/webhook-outbox.ts';
import { AdminError } from '../errors.ts';
import type { IssuedToken } from '../operations.ts';
import { seedMicros, type TSeedConversation, type TSeedRef } from './format.ts';

/*
 * The bulk writer: a batch of seed conversations becomes one statement per table, each batch's
 * rows travelling as one JSON parameter spread into rows by jsonb_to_recordset.
 */

export interface SeedCounts {
  accounts: number;
  users: number;
  conversations: number;
  messages: number;
  tags: number;
}

export interface LoadedAccount {
  key: string;
  id: number;
  tokens: IssuedToken[];
  /** The endpoints the seed subscribed, with their secrets (reported once). */
  webhooks: { id: number; url: string; events: WebhookEventType[]; secret: string }[];
}

/** An account's workflows or intake pages as a seed refers to them: by name, or by position from 1. */
export class Named<T extends { id: number }> {
  private readonly list: T[] = [];
  /** null: more than one has the name. */
  private readonly byName = new Map<string, T | null>();
  private readonly what: string;

  constructor(what: string) {
    this.what = what;
  }

  add(name: string, item: T): void {
    this.list.push(item);
    this.byName.set(name, this.byName.has(name) ? null : item);
  }

  /** Its position from 1, the reference that is never ambiguous. */
  positionOf(id: number): number | undefined {
    const i = this.list.findIndex((item) => item.id === id);
    return i < 0 ? undefined : i + 1;
  }

  /** The one `ref` names; `where` says who asks, when it names none or more than one. */
  get(ref: TSeedRef, where: string): T {
    const found = typeof ref === 'number' ? this.list[ref - 1] : this.byName.get(ref);
    if (found === null) throw new AdminError(`${where}: two ${this.what}s are named ${ref}; give its position instead`);
    if (found === undefined) throw new AdminError(`${where}: no ${this.what} ${JSON.stringify(ref)}`);
    return found;
  }
}

export interface AccountRefs extends Pick<AccountContext, 'titleTemplate' | 'defaults' | 'owner'> {
  id: number;
  users: Map<string, number>;
  workflows: Named<WorkflowRecord>;
  intakePages: Named<IntakePageRecord>;
  tags: Map<string, number>;
  /** The account's message templates, by lower-cased name. */
  templates: Map<string, number>;
}

function userId(refs: AccountRefs, email: string, where: string): number {
  const id = refs.users.get(email.toLowerCase());
  if (id === undefined) throw new AdminError(`${where}: ${email} is not a user of the account`);
  return id;
}

export async function ensureTags(em: EntityManager, refs: AccountRefs, names: Iterable<string>): Promise<number> {
  // Tag names are unique ignoring case: the first spelling met is the one kept.
  const firsts = new Map<string, string>();
  for (const n of names) if (!firsts.has(n.toLowerCase())) firsts.set(n.toLowerCase(), n);
  const missing = [...firsts.values()].filter((n) => !refs.tags.has(n.toLowerCase()));
  if (missing.length === 0) return 0;
  const rows = await query<{ id: number; name: string }>(
    em,
    `insert into tag (account_id, name)
     select ?, n from jsonb_array_elements_text(?::jsonb) with ordinality as t(n, i) order by i returning id, name`,
    [refs.id, JSON.stringify(missing)],
  );
  for (const r of rows) refs.tags.set(r.name.toLowerCase(), r.id);
  return rows.length;
}

/** An insert of a batch's rows, given the account and the rows as JSON (spread by jsonb_to_recordset). */
type RowsInsert = (accountId: number, rows: string) => RawBuilder<unknown>;

/** Writes `rows` with one statement. */
async function insertRows(em: EntityManager, accountId: number, rows: object[], insert: RowsInsert): Promise<void> {
  if (rows.length > 0) await exec(em, { compile: () => insert(accountId, JSON.stringify(rows)).compile(db) });
}

/**
 * Writes `rows` (conversations, or messages), each followed in the same statement by its event of
 * `type` when the account has an endpoint subscribed to it, and a message by the notifications'
 * event too.
 */
async function insertAnnounced(
  em: EntityManager,
  accountId: number,
  rows: object[],
  insert: RowsInsert,
  type: 'conversation_created' | 'message_created',
) {
  if (rows.length === 0) return;
  const returning =
    type === 'message_created'
      ? sql`account_id, conversation_id, id as message_id, author_id`
      : sql`account_id, id as conversation_id, null::int as message_id, null::int as author_id`;
  const written = db
    .with(
      'src',
      () =>
        sql<{
          account_id: number;
          conversation_id: number;
          message_id: number | null;
          author_id: number | null;
        }>`(${insert(accountId, JSON.stringify(rows))} returning ${returning})`,
    )
    .with('webhook_ev', () =>
      webhookEvents('src', column('src.account_id'), {
        type,
        conversation: column('src.conversation_id'),
        message: column('src.message_id'),
      }),
    );
  const count = sql<number>`count(*)`.as('n');
  await exec(
    em,
    type === 'message_created'
      ? written
          .with('notify_ev', () =>
            notifyEvents('src', {
              account: column('src.account_id'),
              conversation: column('src.conversation_id'),
              message: column('src.message_id'),
              author: column('src.author_id'),
            }),
          )
          .selectFrom('src')
          .select(count)
      : written.selectFrom('src').select(count),
  );
}

export interface BatchOptions {
  /** Announce what is loaded to the account's webhook endpoints (`seed --emit-events`). */
  emitEvents?: boolean;
  /**
   * Keeps a message's `media_file` in the media store, measured (`type` is what the seed says it
   * recorded). Without it, a seed with a media file is refused.
   */
  media?: (file: string, type: MessageType, accountId: number) => Promise<StoredMedia>;
}

export async function loadBatch(
  em: EntityManager,
  refs: AccountRefs,
  batch: TSeedConversation[],
  counts: SeedCounts,
  options: BatchOptions = {},
) {
  // History loaded is not live news: the live feed's triggers write nothing for this transaction.
  await query(em, "set local convo.quiet = 'on'");
  counts.tags += await ensureTags(
    em,
    refs,
    batch.flatMap((c) => c.tags),
  );
  const ids = (
    await query<{ id: number }>(em, "select nextval('conversation_id_seq')::int as id from generate_series(1, ?)", [
      batch.length,
    ])
  ).map((r) => r.id);

  // The recordings first, one at a time (each is read, written and probed whole).
  const recordings = new Map<TSeedConversation['messages'][number], StoredMedia>();
  for (const c of batch) {
    for (const m of c.messages) {
      if (m.media_file === undefined) continue;
      if (!options.media) throw new AdminError(`${m.media_file}: this load takes no media files`);
      recordings.set(m, await options.media(m.media_file, m.type, refs.id));
    }
  }

  const conversations: object[] = [];
  const timers: { c: number; step: number; occurrence: string; due: string }[] = [];
  const restoredCopy = (copy: NonNullable<TSeedConversation['workflow']>, workflowId: number, c: number) => {
    const steps = adoptCopiedSteps(copy.steps);
    for (const t of pendingTimers(steps)) timers.push({ c, step: t.step, occurrence: t.occurrence, due: t.dueAt });
    return { id: workflowId, name: copy.name, steps };
  };
  const members: { c: number; u: number }[] = [];
  const tags: { c: number; t: number }[] = [];
  const messages: object[] = [];
  // A batch with threads or reactions takes its messages' ids first: a reply names its thread's by
  // them, a reaction its message.
  const threaded = batch.some((c) =>
    c.messages.some((m) => m.thread_of !== undefined || (m.reactions?.length ?? 0) > 0),
  );
  const reactions: { m: number; c: number; reaction: string; u: number | null }[] = [];
  const transcripts: { key: string; language: string | null; segments: TranscriptSegment[]; text: string }[] = [];
  const messageIds = threaded
    ? (
        await query<{ id: number }>(em, "select nextval('message_id_seq')::int as id from generate_series(1, ?)", [
          batch.reduce((n, c) => n + c.messages.length, 0),
        ])
      ).map((r) => r.id)
    : [];
  batch.forEach((c, i) => {
    const id = ids[i] as number;
    const where = `conversation ${c.slug ?? c.title ?? `#${counts.conversations + i + 1}`}`;
    const page = c.intake_page === undefined ? null : refs.intakePages.get(c.intake_page, where);
    const draft = draftConversation(
      refs,
      {
        title: c.title,
        slug: c.slug,
        anyoneCanPost: c.anyone_can_post,
        allowAnonymousMessages: c.allow_anonymous_messages,
        allowSearchEngines: c.allow_search_engines,
        memberIds: c.members?.map((e) => userId(refs, e, where)),
        source: page === null ? 'api' : 'intake',
      },
      page,
      c.created_at ? seedMicros(c.created_at) : clockMicros(),
    );
    conversations.push({
      id,
      title: draft.title,
      title_key: titleKey(draft.title),
      slug: draft.slug,
      anyone_can_post: draft.anyoneCanPost,
      allow_anonymous_messages: draft.allowAnonymousMessages,
      allow_search_engines: draft.allowSearchEngines,
      via_primary_intake_page: draft.viaPrimaryIntakePage,
      intake_page_id: draft.intakePageId,
      source: draft.source,
      // Drafted from the intake page, a loaded conversation's copy is history, never run; a copy the
      // seed gives (an export of this server) goes on with its states and timers.
      workflow:
        c.workflow === undefined
          ? draft.workflow && { ...draft.workflow, steps: adoptCopiedSteps(definitionSteps(draft.workflow.steps)) }
          : c.workflow === null
            ? null
            : restoredCopy(c.workflow, refs.workflows.get(c.workflow.of, `${where}, workflow`).id, id),
      created_at: c.created_at ?? timestamptzText(draft.createdAt),
    });
    // Members: those listed, and every registered author (the domain's rule: posting joins).
    const authorIds = c.messages.flatMap((m) => (m.author === null ? [] : [userId(refs, m.author, where)]));
    for (const u of new Set([...draft.memberIds, ...authorIds])) members.push({ c: id, u });
    for (const t of new Set(c.tags.map((n) => refs.tags.get(n.toLowerCase()) as number))) tags.push({ c: id, t });
    const first = messages.length;
    c.messages.forEach((m, at) => {
      const kept = recordings.get(m);
      const root = m.thread_of === undefined ? undefined : c.messages[m.thread_of - 1];
      if (m.thread_of !== undefined && (m.thread_of > at || root?.thread_of !== undefined)) {
        throw new AdminError(
          `${where}, message ${at + 1}: thread_of names an earlier message that is not a reply itself`,
        );
      }
      // A moment is the API's: of a recording's thread, within the recording.
      const rootKept = root && recordings.get(root);
      const moment = momentProblem(m.at_seconds, {
        parentId: m.thread_of ?? null,
        recording:
          root && (rootKept?.kind ?? root.type) !== 'text'
            ? { seconds: rootKept?.seconds ?? root.recorded_duration_seconds }
            : null,
      });
      if (moment) throw new AdminError(`${where}, message ${at + 1}: ${momentApiText(moment)}`);
      const seen = new Set<string>();
      for (const r of m.reactions ?? []) {
        const user = r.user === null ? null : userId(refs, r.user, `${where}, message ${at + 1}`);
        // Once of each kind per person (a visitor's are each their own).
        if (user !== null && seen.has(`${user}:${r.reaction}`)) continue;
        seen.add(`${user}:${r.reaction}`);
        reactions.push({ m: messageIds[first + at] as number, c: id, reaction: r.reaction, u: user });
      }
      if (m.transcript && kept) {
        const segments = m.transcript.segments.map((s) => ({ ...s, end: Math.max(s.start, s.end) }));
        transcripts.push({ key: kept.key, language: m.transcript.language, segments, text: transcriptText(segments) });
      }
      messages.push({
        id: threaded ? messageIds[first + at] : null,
        parent: m.thread_of === undefined ? null : messageIds[first + m.thread_of - 1],
        c: id,
        type: kept?.kind ?? m.type,
        duration: kept?.seconds ?? m.recorded_duration_seconds,
        author: m.author === null ? null : userId(refs, m.author, where),
        anonymous: m.author === null,
        // HTML brought in is held to the same subset as the API's, whatever the file says.
        text: m.format === 'html' ? safeMessageHtml(m.text) : m.text,
        format: m.format,
        media: kept ? null : m.download_media_url,
        created_at: m.created_at ?? c.created_at ?? null,
        hidden: m.hidden,
        media_key: kept?.key ?? null,
        media_content_type: kept?.contentType ?? null,
        media_bytes: kept?.bytes ?? null,
        template_id: m.template === undefined ? null : (refs.templates.get(m.template.toLowerCase()) ?? null),
        template_name: m.template ?? null,
        internal: m.internal || root?.internal === true,
        at_seconds: m.at_seconds ?? null,
      });
    });
  });

  // Each batch travels as one JSON parameter per table, spread into rows by jsonb_to_recordset.
  try {
    const insert: RowsInsert = (account, rows) =>
      sql`insert into conversation (id, account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages,
           allow_search_engines, via_primary_intake_page, intake_page_id, source, workflow, created_at)
         select id, ${account}::int, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines,
           via_primary_intake_page, intake_page_id, source, workflow, coalesce(created_at, now())
         from jsonb_to_recordset(${rows}::jsonb) as t(id int, title text, title_key text, slug text, anyone_can_post bool,
           allow_anonymous_messages bool, allow_search_engines bool, via_primary_intake_page bool, intake_page_id int,
           source text, workflow jsonb, created_at timestamptz)`;
    if (options.emitEvents) await insertAnnounced(em, refs.id, conversations, insert, 'conversation_created');
    else await insertRows(em, refs.id, conversations, insert);
  } catch (e) {
    if (e instanceof Error && e.message.includes(SLUG_UNIQUE_INDEX)) {
      throw new AdminError('a slug appears twice in the account (slugs are unique ignoring case)');
    }
    throw e;
  }
  await insertRows(
    em,
    refs.id,
    timers,
    (account, rows) =>
      sql`insert into workflow_job (account_id, conversation_id, step, occurrence, due_at)
        select ${account}::int, c, step, occurrence, due
        from jsonb_to_recordset(${rows}::jsonb) as t(c int, step int, occurrence text, due timestamptz)`,
  );
  await insertRows(
    em,
    refs.id,
    members,
    (account, rows) =>
      sql`insert into conversation_member (conversation_id, user_id, account_id)
        select c, u, ${account}::int from jsonb_to_recordset(${rows}::jsonb) as t(c int, u int)`,
  );
  await insertRows(
    em,
    refs.id,
    tags,
    (account, rows) =>
      sql`insert into conversation_tag (conversation_id, tag_id, account_id)
        select c, t, ${account}::int from jsonb_to_recordset(${rows}::jsonb) as x(c int, t int)`,
  );
  const insertMessages: RowsInsert = (account, rows) =>
    sql`insert into message (id, account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous,
         text, format, download_media_url, created_at, hidden_at, media_key, media_content_type, media_bytes,
         template_id, template_name, internal, parent_id, at_seconds)
       select coalesce(id, nextval('message_id_seq')::int), ${account}::int, c, type, duration, author, anonymous, text,
         format, media, coalesce(created_at, now()), case when hidden then now() end, media_key, media_content_type,
         media_bytes, template_id, template_name, internal, parent, at_seconds
       from jsonb_to_recordset(${rows}::jsonb) as t(id int, parent int, c int, type text, duration int, author int,
         anonymous bool, text text, format text, media text, created_at timestamptz, hidden bool, media_key text,
         media_content_type text, media_bytes bigint, template_id int, template_name text, internal bool,
         at_seconds int)`;
  if (options.emitEvents) await insertAnnounced(em, refs.id, messages, insertMessages, 'message_created');
  else await insertRows(em, refs.id, messages, insertMessages);
  // A transcript brought with its recording is complete (the message's trigger queued it pending).
  await insertRows(
    em,
    refs.id,
    transcripts,
    (account, rows) =>
      sql`update transcript t set status = 'complete', language = x.language, segments = x.segments, text = x.text,
           reason = null, updated_at = now()
         from jsonb_to_recordset(${rows}::jsonb) as x(key text, language text, segments jsonb, text text)
         where t.media_key = x.key and t.account_id = ${account}::int`,
  );
  // A person's reaction is kept under their key (reactions.ts); a visitor's under one of its own.
  await insertRows(
    em,
    refs.id,
    reactions,
    (account, rows) =>
      sql`insert into message_reaction (account_id, conversation_id, message_id, reaction, user_id, reactor_key)
       select ${account}::int, c, m, reaction, u, case when u is null then 'seed:' || gen_random_uuid() else 'user:' || u end
       from jsonb_to_recordset(${rows}::jsonb) as t(m int, c int, reaction text, u int)`,
  );
  // The inbox orders by latest activity (the newest message loaded, or the creation) and searches
  // what the visible messages say.
  await exec(
    em,
    db
      .updateTable('conversation as c')
      .set({
        // By the conversation alone: with the account too, a planner without statistics yet (a
        // fresh load) read the whole account's index message_account_recent once a conversation.
        last_activity_at: sql<Date>`coalesce((select max(m.created_at) from message m
          where m.conversation_id = c.id and not m.internal), c.created_at)`,
        said: saidOf(sql<number>`c.id`, sql<boolean>`m.hidden_at is null`),
      })
      .where('c.account_id', '=', refs.id)
      .where(sql<boolean>`c.id = any(${intArray(ids)}::int[])`),
  );
  // What the API answers for the account changed: conditional requests see it at once.
  await markChange(em, refs.id);
  counts.conversations += batch.length;
  counts.messages += messages.length;
}
