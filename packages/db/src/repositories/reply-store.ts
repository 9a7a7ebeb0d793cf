import { CONVERSATION_STATES, type NewReply, type ReplyStore, stateAfterMessage } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { changeMark } from './change-marks.ts';
import { messageJson } from './conversation-reads.ts';
import { notifyEvents } from './notification-store.ts';
import { column, db, run, slot, statement } from './query.ts';
import { saidAfter } from './said.ts';
import { webhookEvents } from './webhook-outbox.ts';
import { workflowEvents } from './workflow-jobs.ts';

const account = () => slot<number>('account');
const author = () => sql<number | null>`${slot('author')}::int`;

/** Is the reply's author on the account's team? (An anonymous reply is not.) Read once, as `who.team`. */
const who = () =>
  sql<{ team: boolean }>`(select exists (select 1 from account_user u where u.id = ${author()}
    and u.team_role is not null) as team)`.as('who');

/** The conversation's state after the reply: the domain's stateAfterMessage, for each state. */
const stateAfter = () => {
  const each = (team: boolean) =>
    sql.join(
      CONVERSATION_STATES.map((s) => sql`when ${sql.lit(s)} then ${sql.lit(stateAfterMessage(s, team))}`),
      sql` `,
    );
  return sql<string>`case when who.team then (case state ${each(true)} end) else (case state ${each(false)} end) end`;
};

/** Archived stays archived only after the team's own reply: the other side's brings it back to the inbox. */
const archivedAfter = () => sql<Date | null>`case when who.team then archived_at end`;

/**
 * A reply is a message (text, or a recording with its caption), written by one prepared statement
 * with its webhook event, the event its notifications are made from (notifications.ts) and, in a
 * conversation with a workflow, the event its steps are planned from (workflow-jobs.ts), whatever
 * the number of members; a registered author joins the conversation's members in the same
 * statement (the domain's rule, access.ts), which the change mark already counts. Its form token
 * (submit_key) is unique per account, so the same form sent twice (a double click, a retry after a
 * lost answer) finds the first message and posts once.
 */
const INSERT = statement(
  'reply_insert',
  db
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
          'claimed_name',
          'text',
          'format',
          'submit_key',
          'media_key',
          'media_content_type',
          'media_bytes',
          'poster',
          'template_id',
          'template_name',
          'internal',
          'parent_id',
          'at_seconds',
        ])
        .expression(
          q
            .selectFrom('conversation as c')
            .select([
              'c.account_id',
              'c.id',
              sql<string>`${slot('kind')}::varchar`.as('message_type'),
              sql<number>`${slot('seconds')}::int`.as('recorded_duration_seconds'),
              author().as('author_id'),
              sql<boolean>`${author()} is null`.as('anonymous'),
              sql<string | null>`case when ${author()} is null then ${slot('claimedName')}::text end`.as(
                'claimed_name',
              ),
              sql<string>`${slot('text')}::text`.as('text'),
              sql<string>`${slot('format')}::varchar`.as('format'),
              sql<string | null>`${slot('submitKey')}::varchar`.as('submit_key'),
              sql<string | null>`${slot('mediaKey')}::varchar`.as('media_key'),
              sql<string | null>`${slot('contentType')}::varchar`.as('media_content_type'),
              sql<number | null>`${slot('bytes')}::bigint`.as('media_bytes'),
              sql<boolean>`${slot('poster')}::boolean`.as('poster'),
              sql<number | null>`${slot('templateId')}::int`.as('template_id'),
              sql<string | null>`${slot('templateName')}::varchar`.as('template_name'),
              sql<boolean>`${slot('internal')}::boolean`.as('internal'),
              sql<number | null>`${slot('parent')}::int`.as('parent_id'),
              sql<number | null>`${slot('at')}::int`.as('at_seconds'),
            ])
            .where('c.id', '=', slot<number>('conversation'))
            .where('c.account_id', '=', account()),
        )
        .onConflict((c) => c.columns(['account_id', 'submit_key']).where('submit_key', 'is not', null).doNothing())
        // What messageJson reads of a message: the answer is built from the row as written.
        .returning([
          'id',
          'conversation_id',
          'message_type',
          'recorded_duration_seconds',
          'author_id',
          'anonymous',
          'text',
          'download_media_url',
          'media_key',
          'template_id',
          'template_name',
          'internal',
          'parent_id',
          'at_seconds',
          'created_at',
        ]),
    )
    .with('touched', (q) =>
      q
        .updateTable('conversation')
        .from(who())
        .set({
          last_activity_at: sql<Date>`now()`,
          state: stateAfter(),
          archived_at: archivedAfter(),
          said: saidAfter(sql<string>`${slot('text')}::text`),
        })
        .where('id', '=', slot<number>('conversation'))
        .where('account_id', '=', account())
        .where((eb) => eb.exists(eb.selectFrom('added').select('added.id')))
        // An internal note changes nothing anyone outside the team could notice.
        .where(sql<boolean>`not ${slot('internal')}::boolean`),
    )
    .with('joined', (q) =>
      q
        .insertInto('conversation_member')
        .columns(['conversation_id', 'user_id', 'account_id'])
        .expression(
          q
            .selectFrom('added')
            .select(['conversation_id', author().as('user_id'), sql<number>`${account()}::int`.as('account_id')])
            .where(sql<boolean>`${author()} is not null`),
        )
        .onConflict((c) => c.doNothing()),
    )
    .with('webhook_ev', () =>
      webhookEvents('added', sql<number>`${account()}::int`, {
        type: 'message_created',
        conversation: column('added.conversation_id'),
        message: column('added.id'),
      }),
    )
    .with('notify_ev', () =>
      notifyEvents('added', {
        account: sql<number>`${account()}::int`,
        conversation: column('added.conversation_id'),
        message: column('added.id'),
        author: author(),
      }),
    )
    .with('change_mark', () => changeMark('added', sql<number>`${account()}::int`))
    .with('workflow_ev', () =>
      workflowEvents(
        'added',
        {
          account: sql<number>`${account()}::int`,
          conversation: column('added.conversation_id'),
          when: sql<boolean>`not ${slot('internal')}::boolean
            and exists (select 1 from conversation c where c.id = added.conversation_id and c.workflow is not null)`,
        },
        { message: column('added.id'), author: author() },
      ),
    )
    .selectFrom('added as m')
    .innerJoin('conversation as c', 'c.id', 'm.conversation_id')
    .leftJoin('account_user as u', 'u.id', 'm.author_id')
    .select([
      'm.id',
      sql<boolean>`true`.as('created'),
      // The message as create_message answers it, when asked (`host` given): no read after.
      sql<string | null>`case when ${slot('host')}::text is not null then ${messageJson('detail')} end`.as('detail'),
    ])
    .unionAll(
      db
        .selectFrom('message')
        .select(['id', sql<boolean>`false`.as('created'), sql<string | null>`null::text`.as('detail')])
        .where('account_id', '=', account())
        .where('submit_key', '=', sql<string>`${slot('submitKey')}::varchar`)
        .where(sql<boolean>`not exists (select 1 from added)`),
    ),
);

/**
 * An unconfirmed start's message gets its author (the address's person, who confirmed), who joins
 * the conversation's members; the change mark moves with it.
 */
const CLAIM = statement(
  'reply_claim',
  db
    .with('claimed', (q) =>
      q
        .updateTable('message')
        .set({ author_id: slot<number>('author'), anonymous: false, claimed_name: null })
        .where('account_id', '=', account())
        .where('id', '=', slot<number>('message'))
        .where('author_id', 'is', null)
        .where('claimed_name', 'is not', null)
        .returning(['id', 'conversation_id']),
    )
    .with('joined', (q) =>
      q
        .insertInto('conversation_member')
        .columns(['conversation_id', 'user_id', 'account_id'])
        .expression(
          q
            .selectFrom('claimed')
            .select([
              'conversation_id',
              sql<number>`${slot('author')}::int`.as('user_id'),
              sql<number>`${account()}::int`.as('account_id'),
            ]),
        )
        .onConflict((c) => c.doNothing()),
    )
    .with('change_mark', () => changeMark('claimed', sql<number>`${account()}::int`))
    .selectFrom('claimed')
    .select('claimed.id'),
);

/** A message of the conversation (not hidden) and its thread's first message, with that one's note flag. */
const THREAD = statement(
  'message_thread_of',
  db
    .selectFrom('message as m')
    .leftJoin('message as r', (j) =>
      j.onRef('r.id', '=', 'm.parent_id').onRef('r.conversation_id', '=', 'm.conversation_id'),
    )
    .select([
      sql<number>`coalesce(r.id, m.id)`.as('root'),
      sql<boolean>`coalesce(r.internal, m.internal)`.as('internal'),
      // The first message's recording, when it is one: its length (a moment in it is checked against it).
      sql<number | null>`case when coalesce(r.message_type, m.message_type) <> 'text'
        then coalesce(case when r.id is null then m.recorded_duration_seconds else r.recorded_duration_seconds end, 0)
        end`.as('recording_seconds'),
    ])
    .where('m.account_id', '=', account())
    .where('m.conversation_id', '=', slot<number>('conversation'))
    .where('m.id', '=', slot<number>('message'))
    .where('m.hidden_at', 'is', null),
);

/** A form token's message in a conversation. */
const POSTED = statement(
  'reply_posted',
  db
    .selectFrom('message')
    .select('id')
    .where('account_id', '=', account())
    .where('submit_key', '=', slot<string>('submitKey'))
    .where('conversation_id', '=', slot<number>('conversation')),
);

export class PgReplyStore implements ReplyStore {
  private readonly em: EntityManager;
  /** Whether a speech engine is configured: a transcript not made yet is `pending`, else `off`. */
  private readonly transcribing: boolean;

  constructor(em: EntityManager, options: { transcribing?: boolean } = {}) {
    this.em = em;
    this.transcribing = options.transcribing === true;
  }

  async insert(
    accountId: number,
    conversationId: number,
    reply: NewReply,
  ): Promise<{ id: number; created: boolean; detail: string | null } | null> {
    const media = reply.media;
    const [row] = await run(this.em, INSERT, {
      account: accountId,
      conversation: conversationId,
      author: reply.authorId,
      claimedName: reply.claimedName ?? null,
      text: reply.text,
      format: reply.format ?? 'text',
      submitKey: reply.submitKey,
      kind: media?.kind ?? 'text',
      seconds: media?.seconds ?? 0,
      mediaKey: media?.key ?? null,
      contentType: media?.contentType ?? null,
      bytes: media?.bytes ?? null,
      poster: media?.poster === true,
      templateId: reply.template?.id ?? null,
      templateName: reply.template?.name ?? null,
      internal: reply.internal === true,
      parent: reply.parentId ?? null,
      at: reply.atSeconds ?? null,
      host: reply.answerAs?.host ?? null,
      key: reply.answerAs?.key ?? null,
      transcribing: this.transcribing,
    });
    return row ? { id: Number(row.id), created: row.created, detail: row.detail } : null;
  }

  async threadOf(accountId: number, conversationId: number, messageId: number) {
    const [row] = await run(this.em, THREAD, { account: accountId, conversation: conversationId, message: messageId });
    return row
      ? {
          rootId: row.root,
          internal: row.internal,
          recording: row.recording_seconds === null ? null : { seconds: row.recording_seconds },
        }
      : null;
  }

  async posted(accountId: number, conversationId: number, submitKey: string): Promise<{ id: number } | null> {
    const [row] = await run(this.em, POSTED, { account: accountId, conversation: conversationId, submitKey });
    return row ? { id: Number(row.id) } : null;
  }

  async claim(accountId: number, messageId: number, authorId: number): Promise<{ id: number } | null> {
    const [row] = await run(this.em, CLAIM, { account: accountId, message: messageId, author: authorId });
    return row ? { id: Number(row.id) } : null;
  }
}
