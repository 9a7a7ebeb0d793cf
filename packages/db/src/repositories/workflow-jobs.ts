import {
  changeStep,
  type MessageSide,
  type OutgoingMail,
  type planSteps,
  type runWorkflowStep,
  type StepChange,
  timestamptzText,
  type WebhookEnvelope,
  type WorkflowActions,
  type WorkflowCopy,
  type WorkflowEvent,
  type WorkflowJob,
  type WorkflowJobStore,
  type WorkflowStepContext,
  WorkflowStepFailed,
  workflowRetryDelaySeconds,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type RawBuilder, sql } from 'kysely';
import { markChange } from './change-marks.ts';
import { RECORDING_COLUMNS } from './conversation-reads.ts';
import { PgMailOutbox } from './mail-outbox.ts';
import { notifyEvents } from './notification-store.ts';
import { column, db, rowsOf, run, sameAddress, slot, statement } from './query.ts';
import { saidAfter } from './said.ts';
import { fromJson, query } from './sql.ts';
import { makeTags } from './tags.ts';
import { webhookEvents } from './webhook-outbox.ts';

/*
 * Workflows at work, in two tables (migration workflows): `workflow_event`, one row per
 * conversation created with a workflow and per message posted in one, written by that statement
 * (workflowEvents); and `workflow_job`, one row per step and occurrence (unique), due at a
 * time. Both are taken with SKIP LOCKED in a transaction that also locks the conversations they
 * change, so any number of processes share them and a step's writes commit with its new state,
 * or not at all: at most once per conversation and occurrence, across restarts and replicas.
 */

/** One workflow event of a row of the source: the message it is about (none: the conversation's start) and its author. */
export interface WorkflowEventOf {
  message: RawBuilder<number | null>;
  author: RawBuilder<number | null>;
}

/**
 * The insert of a `with` (named `workflow_ev`): `events`, in that order, for each row of `source`
 * where `when` holds.
 */
export function workflowEvents(
  source: string,
  c: { account: RawBuilder<number>; conversation: RawBuilder<number>; when: RawBuilder<boolean> },
  ...events: [WorkflowEventOf, ...WorkflowEventOf[]]
) {
  const insert = db.insertInto('workflow_event').columns(['account_id', 'conversation_id', 'message_id', 'author_id']);
  const [only] = events;
  if (events.length === 1) {
    return insert.expression(
      rowsOf(source)
        .select([
          c.account.as('account_id'),
          c.conversation.as('conversation_id'),
          only.message.as('message_id'),
          only.author.as('author_id'),
        ])
        .where(c.when),
    );
  }
  const each = events.map((e, n) => sql`(${sql.lit(n)}, ${e.message}, ${e.author})`);
  return insert.expression(
    rowsOf(source)
      .crossJoinLateral(
        sql<{ n: number; message_id: number | null; author_id: number | null }>`(values ${sql.join(each)})`.as<'e'>(
          sql`e(n, message_id, author_id)`,
        ),
      )
      .select([
        c.account.as('account_id'),
        c.conversation.as('conversation_id'),
        column<number | null>('e.message_id').as('message_id'),
        column<number | null>('e.author_id').as('author_id'),
      ])
      .where(c.when)
      .orderBy(column('e.n')),
  );
}

interface LockedConversation {
  id: number;
  account_id: number;
  slug: string;
  title: string;
  workflow: unknown;
  created_us: string;
  key: string;
  host: string;
  account_name: string;
}

const MICROS = `(extract(epoch from %) * 1000000)::bigint::text`;
const micros = (column: string) => MICROS.replace('%', column);

/** The conversations `ids` with their accounts, locked for this transaction (in id order: no deadlock). */
async function lockConversations(tx: EntityManager, ids: number[]): Promise<Map<number, LockedConversation>> {
  const rows = await query<LockedConversation>(
    tx,
    `select c.id, c.account_id, c.slug, c.title, c.workflow, ${micros('c.created_at')} as created_us,
       a.key, a.host, a.name as account_name
     from conversation c join account a on a.id = c.account_id
     where c.id in (select x::int from jsonb_array_elements_text(?::jsonb) x) and c.workflow is not null order by c.id for update of c`,
    [JSON.stringify([...new Set(ids)])],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** Writes the changed copies back, and moves the change mark of each account they belong to. */
async function saveCopies(tx: EntityManager, changed: Map<number, { accountId: number; copy: WorkflowCopy }>) {
  if (changed.size === 0) return;
  await query(
    tx,
    `update conversation c set workflow = v.w from jsonb_to_recordset(?::jsonb) as v(id int, w jsonb) where c.id = v.id`,
    [JSON.stringify([...changed].map(([id, { copy }]) => ({ id, w: copy })))],
  );
  for (const accountId of new Set([...changed.values()].map((c) => c.accountId))) await markChange(tx, accountId);
}

async function insertJobs(
  tx: EntityManager,
  jobs: {
    account: number;
    conversation: number;
    step: number;
    occurrence: string;
    message: number | null;
    due: string;
  }[],
) {
  if (jobs.length === 0) return;
  await query(
    tx,
    `insert into workflow_job (account_id, conversation_id, step, occurrence, message_id, due_at)
     select account, conversation, step, occurrence, message, due::timestamptz
     from jsonb_to_recordset(?::jsonb) as j(account int, conversation int, step int, occurrence text, message int, due text)
     on conflict (conversation_id, step, occurrence) do nothing`,
    [JSON.stringify(jobs)],
  );
}

/**
 * Posts a step's message: at most once per job (the unique workflow_job_id), with its events (the
 * runner moves the account's change mark once for its batch). A template, when the step names
 * one, is read as it is now: its text (else the step's) and its recording (else the step's).
 */
const POST_MESSAGE = statement(
  'workflow_post_message',
  db
    .with('author', () =>
      db
        .selectFrom('account_user')
        .select('id')
        .where('account_id', '=', slot<number>('account'))
        .where(sameAddress('email', slot<string>('as')))
        .where('team_role', 'is not', null),
    )
    .with('recording', () =>
      db
        .selectFrom('message')
        .select(RECORDING_COLUMNS)
        .where('account_id', '=', slot<number>('account'))
        .where('id', '=', sql<number>`${slot('recording')}::int`)
        .where('media_key', 'is not', null)
        .where('hidden_at', 'is', null),
    )
    .with('tpl', () =>
      db
        .selectFrom('message_template')
        .select(['id', 'name', 'text', 'format', ...RECORDING_COLUMNS])
        .where('account_id', '=', slot<number>('account'))
        .where('id', '=', sql<number>`${slot('template')}::int`),
    )
    .with('added', (q) =>
      q
        .insertInto('message')
        .columns([
          'account_id',
          'conversation_id',
          'message_type',
          'recorded_duration_seconds',
          'author_id',
          'anonymous',
          'text',
          'format',
          'media_key',
          'media_content_type',
          'media_bytes',
          'poster',
          'workflow_job_id',
          'template_id',
          'template_name',
        ])
        .expression(
          q
            .selectFrom('conversation as c')
            .crossJoin('author')
            .leftJoin('recording as r', (j) => j.onTrue())
            .leftJoin('tpl as t', (j) => j.onTrue())
            .select([
              'c.account_id',
              'c.id',
              sql<string>`case when t.media_key is not null then t.message_type else coalesce(r.message_type, 'text') end`.as(
                'message_type',
              ),
              sql<number>`case when t.media_key is not null then t.recorded_duration_seconds
                else coalesce(r.recorded_duration_seconds, 0) end`.as('recorded_duration_seconds'),
              'author.id',
              sql<boolean>`false`.as('anonymous'),
              sql<string>`case when t.text <> '' then t.text else ${slot('text')}::text end`.as('text'),
              sql<string>`case when t.text <> '' then t.format else 'text' end`.as('format'),
              sql<string | null>`coalesce(t.media_key, r.media_key)`.as('media_key'),
              sql<
                string | null
              >`case when t.media_key is not null then t.media_content_type else r.media_content_type end`.as(
                'media_content_type',
              ),
              sql<string | null>`case when t.media_key is not null then t.media_bytes else r.media_bytes end`.as(
                'media_bytes',
              ),
              sql<boolean>`case when t.media_key is not null then t.poster else coalesce(r.poster, false) end`.as(
                'poster',
              ),
              sql<number>`${slot('job')}::int`.as('workflow_job_id'),
              sql<number | null>`t.id`.as('template_id'),
              sql<string | null>`t.name`.as('template_name'),
            ])
            .where('c.id', '=', slot<number>('conversation'))
            .where('c.account_id', '=', slot<number>('account'))
            .where(sql<boolean>`(${slot('recording')}::int is null or r.media_key is not null)`)
            .where(sql<boolean>`(${slot('template')}::int is null or t.id is not null)`),
        )
        .onConflict((c) => c.column('workflow_job_id').where('workflow_job_id', 'is not', null).doNothing())
        .returning(['id', 'account_id', 'conversation_id', 'author_id', 'text']),
    )
    .with('touched', (q) =>
      q
        .updateTable('conversation')
        .set({ last_activity_at: sql<Date>`now()`, said: saidAfter(sql<string>`(select a.text from added a)`) })
        .where('id', 'in', q.selectFrom('added').select('conversation_id')),
    )
    .with('joined', (q) =>
      q
        .insertInto('conversation_member')
        .columns(['conversation_id', 'user_id', 'account_id'])
        .expression(q.selectFrom('added').select(['conversation_id', 'author_id', 'account_id']))
        .onConflict((c) => c.doNothing()),
    )
    .with('webhook_ev', () =>
      webhookEvents('added', column('added.account_id'), {
        type: 'message_created',
        conversation: column('added.conversation_id'),
        message: column('added.id'),
      }),
    )
    .with('notify_ev', () =>
      notifyEvents('added', {
        account: column('added.account_id'),
        conversation: column('added.conversation_id'),
        message: column('added.id'),
        author: column('added.author_id'),
      }),
    )
    .selectNoFrom([
      sql<number>`(select count(*)::int from author)`.as('authors'),
      sql<number>`(select count(*)::int from recording)`.as('recordings'),
      sql<number>`(select count(*)::int from tpl)`.as('templates'),
    ]),
);

/** The actions of one step, in the runner's transaction (or a savepoint of it). */
function actionsIn(tx: EntityManager, ctx: WorkflowStepContext): WorkflowActions {
  const accountId = ctx.account.id;
  const conversationId = ctx.conversation.id;
  return {
    async silenceSince(messageId: number, side: MessageSide) {
      // Messages people wrote since: a step's own messages neither answer nor restart a silence.
      const [row] = await query<{ answered: boolean; superseded: boolean }>(
        tx,
        `select coalesce(bool_or((u.team_role is not null) <> ?), false) as answered,
                coalesce(bool_or((u.team_role is not null) = ?), false) as superseded
         from message m left join account_user u on u.id = m.author_id
         where m.account_id = ? and m.conversation_id = ? and m.id > ? and m.workflow_job_id is null and m.hidden_at is null
           and not m.internal`,
        [side === 'team', side === 'team', accountId, conversationId, messageId],
      );
      return { answered: row?.answered ?? false, superseded: row?.superseded ?? false };
    },
    async postMessage({ as, text, recordingMessageId, templateId }) {
      const [row] = await run(tx, POST_MESSAGE, {
        account: accountId,
        as,
        recording: recordingMessageId,
        template: templateId,
        text,
        job: ctx.job.id,
        conversation: conversationId,
      });
      if (!row || row.authors === 0) return `${as} is not on the account's team`;
      if (recordingMessageId !== null && row.recordings === 0) {
        return `message ${recordingMessageId} has no recording kept here`;
      }
      if (templateId !== null && row.templates === 0) return `message template ${templateId} is gone`;
      return null;
    },
    async addTags(tags: string[]) {
      // The tags first, then the conversation's (the runner moves the change mark once for the batch).
      await makeTags(tx, accountId, tags);
      await query(
        tx,
        `insert into conversation_tag (conversation_id, tag_id, account_id)
         select ?, id, account_id from tag where account_id = ? and lower(name) in (
           select lower(t) from jsonb_array_elements_text(?::jsonb) t)
         on conflict do nothing`,
        [conversationId, accountId, JSON.stringify(tags)],
      );
    },
    async addMembers(emails: string[]) {
      const wanted = emails.map((e) => e.trim().toLowerCase());
      const found = await query<{ email: string }>(
        tx,
        `with people as (select id, lower(email) as email from account_user where account_id = ? and lower(email) in (select lower(x) from jsonb_array_elements_text(?::jsonb) x)),
         added as (insert into conversation_member (conversation_id, user_id, account_id)
                   select ?, id, ? from people on conflict do nothing)
         select email from people`,
        [accountId, JSON.stringify(wanted), conversationId, accountId],
      );
      const have = new Set(found.map((r) => r.email));
      return emails.filter((e) => !have.has(e.trim().toLowerCase()));
    },
    teamMembers: (emails: string[]) =>
      query<{ email: string; name: string }>(
        tx,
        'select email, name from account_user where account_id = ? and team_role is not null and lower(email) in (select lower(x) from jsonb_array_elements_text(?::jsonb) x)',
        [accountId, JSON.stringify(emails)],
      ),
    enqueueMail: (mail: OutgoingMail) => new PgMailOutbox(tx).enqueue(accountId, mail),
    async emitEvent(envelope: WebhookEnvelope) {
      await query(
        tx,
        `insert into webhook_event (account_id, type, conversation_id, message_id, payload)
         select ?, ?, ?, null, to_jsonb(?::text)
         where exists (select 1 from webhook_endpoint w where w.account_id = ? and w.disabled_at is null and ? = any(w.events))`,
        [accountId, envelope.type, conversationId, JSON.stringify(envelope), accountId, envelope.type],
      );
    },
  };
}

const STEP_NOT_DONE = 'the step could not be done';

/** A step of an unguarded batch failed: the batch is rolled back and run again, guarded. */
class StepFailedInBatch extends Error {
  constructor(cause: unknown) {
    super('a workflow step failed in its batch', { cause });
    this.name = 'StepFailedInBatch';
  }
}

export class PgWorkflowJobs implements WorkflowJobStore {
  private readonly em: EntityManager;
  /** Told of a step that threw something else than a refusal (a fault to log). */
  private readonly onFault: (err: unknown) => void;

  constructor(em: EntityManager, onFault: (err: unknown) => void = () => {}) {
    this.em = em;
    this.onFault = onFault;
  }

  /** Turns up to `limit` events into step jobs (and shows them pending); the number of events taken. */
  expandEvents(limit: number, plan: typeof planSteps): Promise<number> {
    return this.em.fork().transactional(async (tx) => {
      const events = await query<{
        conversation_id: number;
        message_id: number | null;
        author_id: number | null;
        author_team: boolean;
        in_thread: boolean;
        played: boolean;
        at_us: string;
      }>(
        tx,
        `with ev as (
           delete from workflow_event where id in (select id from workflow_event order by id limit ? for update skip locked)
           returning id, conversation_id, message_id, author_id, played, created_at)
         select ev.conversation_id, ev.message_id, ev.author_id, coalesce(u.team_role is not null, false) as author_team,
           ev.played,
           exists (select 1 from message m where m.id = ev.message_id and m.parent_id is not null) as in_thread,
           ${micros('ev.created_at')} as at_us
         from ev left join account_user u on u.id = ev.author_id order by ev.id`,
        [limit],
      );
      if (events.length === 0) return 0;
      const conversations = await lockConversations(
        tx,
        events.map((e) => e.conversation_id),
      );
      const copies = new Map<number, { accountId: number; copy: WorkflowCopy }>();
      const jobs: Parameters<typeof insertJobs>[1] = [];
      for (const e of events) {
        const c = conversations.get(e.conversation_id);
        if (!c) continue;
        let copy = copies.get(c.id)?.copy ?? fromJson<WorkflowCopy>(c.workflow);
        const side = e.author_team ? 'team' : 'participant';
        const event: WorkflowEvent =
          e.message_id === null
            ? { kind: 'created' }
            : e.played
              ? { kind: 'played', messageId: e.message_id, side }
              : { kind: 'message', messageId: e.message_id, side, inThread: e.in_thread };
        const at = BigInt(e.message_id === null ? c.created_us : e.at_us);
        for (const p of plan(copy.steps, event, at)) {
          jobs.push({
            account: c.account_id,
            conversation: c.id,
            step: p.step,
            occurrence: p.occurrence,
            message: p.messageId,
            due: timestamptzText(p.dueAt),
          });
          // Creation's steps already show their times (the copy was made with them).
          if (event.kind !== 'created') copy = changeStep(copy, p.step, { kind: 'planned', dueAt: p.dueAt });
        }
        if (event.kind !== 'created') copies.set(c.id, { accountId: c.account_id, copy });
      }
      await insertJobs(tx, jobs);
      await saveCopies(tx, copies);
      return events.length;
    });
  }

  /**
   * Runs up to `limit` due steps; the number taken. A batch runs its steps straight in its
   * transaction; when one of them fails, the batch is rolled back whole and run again with each
   * step in a savepoint of its own, so the failure is recorded and the others still commit.
   * Failures are rare, so the savepoints' two round trips a step are spent only then.
   */
  async runDueSteps(limit: number, run: typeof runWorkflowStep): Promise<number> {
    try {
      return await this.runBatch(limit, run, false);
    } catch (e) {
      if (!(e instanceof StepFailedInBatch)) throw e;
      return this.runBatch(limit, run, true);
    }
  }

  private runBatch(limit: number, run: typeof runWorkflowStep, guarded: boolean): Promise<number> {
    return this.em.fork().transactional(async (tx) => {
      const jobs = await query<{
        id: number;
        conversation_id: number;
        step: number;
        occurrence: string;
        message_id: number | null;
        attempts: number;
      }>(
        tx,
        `select id, conversation_id, step, occurrence, message_id, attempts from workflow_job
         where state = 'pending' and due_at <= now() order by due_at, id limit ? for update skip locked`,
        [limit],
      );
      if (jobs.length === 0) return 0;
      const conversations = await lockConversations(
        tx,
        jobs.map((j) => j.conversation_id),
      );
      const copies = new Map<number, { accountId: number; copy: WorkflowCopy }>();
      const results: { id: number; state: string; error: string | null; due: string | null; attempts: number }[] = [];
      const next: Parameters<typeof insertJobs>[1] = [];
      for (const j of jobs) {
        const c = conversations.get(j.conversation_id);
        if (!c) {
          results.push({
            id: j.id,
            state: 'skipped',
            error: 'the conversation has no workflow',
            due: null,
            attempts: j.attempts,
          });
          continue;
        }
        const copy = copies.get(c.id)?.copy ?? fromJson<WorkflowCopy>(c.workflow);
        const job: WorkflowJob = {
          id: j.id,
          step: j.step,
          occurrence: j.occurrence,
          messageId: j.message_id,
          attempts: j.attempts,
        };
        const ctx: WorkflowStepContext = {
          account: { id: c.account_id, key: c.key, host: c.host, name: c.account_name },
          conversation: { id: c.id, slug: c.slug, title: c.title, createdAt: BigInt(c.created_us), workflow: copy },
          job,
        };
        const now = new Date();
        let change: StepChange;
        try {
          // Guarded, a savepoint: a step that fails leaves nothing of itself behind, and the batch goes on.
          const outcome = guarded
            ? await tx.transactional((inner) => run(actionsIn(inner, ctx), ctx, now))
            : await run(actionsIn(tx, ctx), ctx, now).catch((err: unknown) => {
                throw new StepFailedInBatch(err);
              });
          if (outcome.state === 'done') {
            const nowMicros = BigInt(now.getTime()) * 1000n;
            change = { kind: 'done', at: nowMicros, nextDueAt: outcome.next?.dueAt ?? null };
            results.push({ id: j.id, state: 'done', error: null, due: null, attempts: j.attempts + 1 });
            if (outcome.next) {
              next.push({
                account: c.account_id,
                conversation: c.id,
                step: j.step,
                occurrence: outcome.next.occurrence,
                message: null,
                due: timestamptzText(outcome.next.dueAt),
              });
            }
          } else {
            change = { kind: 'skipped', reason: outcome.reason };
            results.push({ id: j.id, state: 'skipped', error: outcome.reason, due: null, attempts: j.attempts });
          }
        } catch (err) {
          // Unguarded, the whole batch starts again with savepoints.
          if (err instanceof StepFailedInBatch) throw err;
          const reason = err instanceof WorkflowStepFailed ? err.message : STEP_NOT_DONE;
          if (!(err instanceof WorkflowStepFailed)) this.onFault(err);
          const attempts = j.attempts + 1;
          const delay = workflowRetryDelaySeconds(attempts);
          if (delay === null) {
            change = { kind: 'failed', reason };
            results.push({ id: j.id, state: 'failed', error: reason, due: null, attempts });
          } else {
            const dueAt = BigInt(now.getTime() + delay * 1000) * 1000n;
            change = { kind: 'retry', reason, dueAt };
            results.push({ id: j.id, state: 'pending', error: reason, due: timestamptzText(dueAt), attempts });
          }
        }
        copies.set(c.id, { accountId: c.account_id, copy: changeStep(copy, j.step, change) });
      }
      await query(
        tx,
        `update workflow_job j set state = r.state, last_error = r.error, attempts = r.attempts,
           due_at = coalesce(r.due::timestamptz, j.due_at), done_at = case when r.state = 'done' then now() else j.done_at end
         from jsonb_to_recordset(?::jsonb) as r(id int, state text, error text, due text, attempts int) where j.id = r.id`,
        [JSON.stringify(results)],
      );
      await insertJobs(tx, next);
      await saveCopies(tx, copies);
      return jobs.length;
    });
  }
}
