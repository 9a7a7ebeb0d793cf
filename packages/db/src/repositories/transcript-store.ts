import type {
  DueRecording,
  KeptTranscript,
  MessageOfAccount,
  TranscriptJobStore,
  TranscriptOutcome,
  TranscriptSegment,
  TranscriptStore,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { changeMark } from './change-marks.ts';
import { db, isoTime, run, slot, statement } from './query.ts';
import { saidAfter, saidOf } from './said.ts';

/*
 * Transcripts (the domain's transcripts/): the job's queue (rows a message's trigger made, taken
 * with SKIP LOCKED by any replica, each try counted as it is claimed, so a replica that dies
 * mid-try costs that try and no more), what each try came to, and the transcripts as pages and
 * the API read them. A transcript that completes adds its words to the search of every
 * conversation whose visible messages carry its recording (said.ts).
 */

const CLAIM = statement(
  'transcript_claim',
  db
    .updateTable('transcript as t')
    .set({
      attempts: sql`t.attempts + 1`,
      due_at: sql`now() + make_interval(secs => ${slot('lease')}::int)`,
      updated_at: sql`now()`,
    })
    .from(
      db
        .selectFrom('transcript')
        .select('media_key')
        .where('status', '=', 'pending')
        .where('due_at', '<=', sql<Date>`now()`)
        .orderBy('due_at')
        .limit(slot<number>('limit'))
        .forUpdate()
        .skipLocked()
        .as('d'),
    )
    .whereRef('t.media_key', '=', 'd.media_key')
    .returning(['t.media_key', 't.account_id', 't.attempts']),
);

const SETTLE = statement(
  'transcript_settle',
  db
    .updateTable('transcript')
    .set({
      status: slot<string>('status'),
      reason: slot<string | null>('reason'),
      due_at: sql`now() + make_interval(secs => ${slot('in')}::float8)`,
      updated_at: sql`now()`,
    })
    .where('media_key', '=', slot<string>('key'))
    .where('status', '=', 'pending'),
);

/**
 * A transcript complete: its row, then the words it says added to the search of each
 * conversation whose visible messages (not internal notes) carry the recording.
 */
const COMPLETE = statement(
  'transcript_complete',
  db
    .with('done', (q) =>
      q
        .updateTable('transcript')
        .set({
          status: 'complete',
          reason: null,
          language: slot<string | null>('language'),
          segments: sql`${slot('segments')}::jsonb`,
          text: slot<string>('text'),
          updated_at: sql`now()`,
        })
        .where('media_key', '=', slot<string>('key'))
        .where('status', '=', 'pending')
        .returning(['media_key', 'account_id', 'text', 'language', 'updated_at']),
    )
    // What the inbox's search finds changes with the account's words (change-marks.ts).
    .with('change_mark', () => changeMark('done', sql<number>`(select account_id from done)`))
    // Each message that carries it (shown, not an internal note) tells the account's webhooks.
    .with('webhook_ev', (q) =>
      q
        .insertInto('webhook_event')
        .columns(['account_id', 'type', 'conversation_id', 'message_id', 'payload'])
        .expression(
          q
            .selectFrom('done as d')
            .innerJoin('message as m', (j) =>
              j.onRef('m.media_key', '=', 'd.media_key').onRef('m.account_id', '=', 'd.account_id'),
            )
            .innerJoin('account as a', 'a.id', 'm.account_id')
            .select([
              'm.account_id',
              sql.lit('message_transcribed').as('type'),
              'm.conversation_id',
              'm.id',
              sql<string>`to_jsonb(concat('{"type":"message_transcribed","timestamp":"', ${isoTime('d.updated_at')},
              '","data":{"message_id":', m.id, ',"conversation_id":', m.conversation_id,
              ',"transcript":{"status":"complete","language":', coalesce(to_json(d.language)::text, 'null'),
              ',"text":', to_json(d.text)::text,
              ',"captions_url":', to_json(a.host || '/media/' || a.key || '/' || m.id || '/captions.vtt')::text, '}}}'))`.as(
                'payload',
              ),
            ])
            .where('m.hidden_at', 'is', null)
            .where('m.internal', '=', false)
            .where(
              sql<boolean>`exists (select 1 from webhook_endpoint w where w.account_id = m.account_id
              and w.disabled_at is null and 'message_transcribed' = any(w.events))`,
            ),
        ),
    )
    .updateTable('conversation as c')
    .set({ said: saidAfter(sql<string>`(select text from done)`) })
    .where(
      'c.id',
      'in',
      db
        .selectFrom('message as m')
        .innerJoin(sql.table('done').as('d'), (j) => j.onTrue())
        .select('m.conversation_id')
        .where(sql<boolean>`m.media_key = d.media_key and m.account_id = d.account_id`)
        .where('m.hidden_at', 'is', null)
        .where('m.internal', '=', false),
    ),
);

const BY_MESSAGES = statement(
  'transcript_by_messages',
  db
    .selectFrom('message as m')
    .innerJoin('transcript as t', 't.media_key', 'm.media_key')
    .select(['m.id', 't.status', 't.language', 't.text', 't.segments', 't.reason'])
    .where('m.account_id', '=', slot<number>('account'))
    .where(sql<boolean>`m.id = any(${slot('messages')}::int[])`),
);

/** The transcript of a message's recording, named by the message in its account and conversation. */
const ofMessage = () =>
  db
    .selectFrom('message as m')
    .select('m.media_key')
    .where('m.account_id', '=', slot<number>('account'))
    .where(sql<boolean>`(${slot('conversation')}::int is null or m.conversation_id = ${slot('conversation')}::int)`)
    .where('m.id', '=', slot<number>('message'));

const RETRY = statement(
  'transcript_retry',
  db
    .updateTable('transcript')
    .set({ status: 'pending', attempts: 0, reason: null, due_at: sql`now()`, updated_at: sql`now()` })
    .where('media_key', '=', ofMessage())
    .returning('media_key'),
);

const CORRECT = statement(
  'transcript_correct',
  db
    .updateTable('transcript')
    .set({
      segments: sql`${slot('segments')}::jsonb`,
      text: slot<string>('text'),
      corrected_by_id: slot<number>('user'),
      updated_at: sql`now()`,
    })
    .where('media_key', '=', ofMessage())
    .where('status', '=', 'complete')
    .returning('media_key'),
);

/** The search of every conversation whose messages carry recording `key`, said again (after a correction). */
const SAY_AGAIN = statement(
  'transcript_say_again',
  db
    .with('resaid', (q) =>
      q
        .updateTable('conversation as c')
        .set({ said: saidOf(sql<number>`c.id`, sql<boolean>`m.hidden_at is null`) })
        .where(
          'c.id',
          'in',
          db
            .selectFrom('message')
            .select('conversation_id')
            .where('account_id', '=', slot<number>('account'))
            .where('media_key', '=', slot<string>('key')),
        )
        .returning('c.id'),
    )
    // What the inbox's search finds changes with the account's words (change-marks.ts).
    .with('change_mark', () => changeMark('resaid', slot<number>('account')))
    .selectFrom('resaid')
    .select('id'),
);

/** Transcripts of recordings no message carries any more (their messages deleted). */
const PURGE = statement(
  'transcript_purge',
  db
    .deleteFrom('transcript as t')
    .where(sql<boolean>`not exists (select 1 from message m where m.media_key = t.media_key)`)
    .returning('t.media_key'),
);

export class PgTranscriptStore implements TranscriptJobStore, TranscriptStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async claim(limit: number, leaseSeconds: number): Promise<DueRecording[]> {
    const rows = await run(this.em, CLAIM, { limit, lease: leaseSeconds });
    return rows.map((r) => ({ mediaKey: r.media_key, accountId: r.account_id, attempts: r.attempts }));
  }

  async settle(due: DueRecording, outcome: TranscriptOutcome): Promise<void> {
    if (outcome.kind === 'complete') {
      const { transcript } = outcome;
      await run(this.em, COMPLETE, {
        key: due.mediaKey,
        language: transcript.language,
        segments: JSON.stringify(transcript.segments),
        text: transcript.text,
      });
      return;
    }
    await run(this.em, SETTLE, {
      key: due.mediaKey,
      status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
      reason: outcome.kind === 'no_audio' ? null : outcome.reason,
      in: outcome.kind === 'retry' ? outcome.inSeconds : 0,
    });
  }

  async byMessages(accountId: number, messageIds: readonly number[]): Promise<Map<number, KeptTranscript>> {
    if (messageIds.length === 0) return new Map();
    const rows = await run(this.em, BY_MESSAGES, { account: accountId, messages: messageIds });
    return new Map(
      rows.map((r) => [
        r.id,
        {
          status: r.status as KeptTranscript['status'],
          language: r.language,
          text: r.text ?? '',
          segments: (r.segments ?? []) as TranscriptSegment[],
          reason: r.reason,
        },
      ]),
    );
  }

  /** Forgets the transcripts of recordings no message carries any more; how many. */
  async purge(): Promise<number> {
    return (await run(this.em, PURGE, {})).length;
  }

  async retry(m: MessageOfAccount): Promise<boolean> {
    return (await run(this.em, RETRY, message(m))).length > 0;
  }

  async correct(m: MessageOfAccount, segments: TranscriptSegment[], text: string, userId: number): Promise<boolean> {
    const [row] = await run(this.em, CORRECT, {
      ...message(m),
      segments: JSON.stringify(segments),
      text,
      user: userId,
    });
    if (!row) return false;
    await run(this.em, SAY_AGAIN, { account: m.accountId, key: row.media_key });
    return true;
  }
}

const message = (m: MessageOfAccount) => ({
  account: m.accountId,
  conversation: m.conversationId,
  message: m.messageId,
});
