import {
  isMediaKind,
  type MessageFormat,
  type MessageTemplateDraft,
  type MessageTemplateRecord,
  type MessageTemplateStore,
  type MessageTemplateWrite,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type InferResult, sql } from 'kysely';
import { RECORDING_COLUMNS } from './conversation-reads.ts';
import { db, exec, first } from './query.ts';
import { violatesUnique } from './sql.ts';

/** The account's message templates; every statement scoped to the account. */

const templates = (accountId: number) =>
  db
    .selectFrom('message_template as t')
    .leftJoin('account_user as u', (j) =>
      j.onRef('u.id', '=', 't.creator_id').onRef('u.account_id', '=', 't.account_id'),
    )
    .select([
      't.id',
      't.name',
      't.text',
      't.format',
      't.message_type',
      't.recorded_duration_seconds',
      't.media_key',
      't.media_content_type',
      't.media_bytes',
      't.poster',
      't.created_at',
      't.updated_at',
      'u.id as creator_id',
      'u.name as creator_name',
      'u.email as creator_email',
    ])
    .where('t.account_id', '=', accountId);

const record = (r: InferResult<ReturnType<typeof templates>>[number]): MessageTemplateRecord => ({
  id: r.id,
  name: r.name,
  text: r.text,
  format: r.format as MessageFormat,
  media:
    r.media_key !== null && r.media_content_type !== null && r.media_bytes !== null && isMediaKind(r.message_type)
      ? {
          key: r.media_key,
          kind: r.message_type,
          contentType: r.media_content_type,
          bytes: Number(r.media_bytes),
          seconds: r.recorded_duration_seconds,
          poster: r.poster,
        }
      : null,
  creator:
    r.creator_id === null ? null : { id: r.creator_id, name: r.creator_name ?? '', email: r.creator_email ?? '' },
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

/** The recording of the account's message (not hidden) this server keeps, as its columns. */
const recordingOf = (accountId: number, messageId: number) =>
  db
    .selectFrom('message')
    .select(RECORDING_COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', messageId)
    .where('media_key', 'is not', null)
    .where('hidden_at', 'is', null);

type RecordingColumns = InferResult<ReturnType<typeof recordingOf>>[number];

const NO_RECORDING: RecordingColumns = {
  message_type: 'text',
  recorded_duration_seconds: 0,
  media_key: null,
  media_content_type: null,
  media_bytes: null,
  poster: false,
};

const nameTaken = (e: unknown): boolean => violatesUnique(e, 'message_template_account_name_unique');

export class PgMessageTemplateStore implements MessageTemplateStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async list(accountId: number): Promise<MessageTemplateRecord[]> {
    return (await exec(this.em, templates(accountId).orderBy(sql`lower(t.name)`).orderBy('t.id'))).map(record);
  }

  async find(accountId: number, id: number): Promise<MessageTemplateRecord | null> {
    const row = await first(this.em, templates(accountId).where('t.id', '=', id));
    return row ? record(row) : null;
  }

  create(accountId: number, draft: MessageTemplateDraft, max: number): Promise<MessageTemplateWrite> {
    return this.write(accountId, null, draft, max);
  }

  change(accountId: number, id: number, draft: MessageTemplateDraft): Promise<MessageTemplateWrite> {
    return this.write(accountId, id, draft, null);
  }

  async remove(accountId: number, id: number): Promise<boolean> {
    const gone = await first(
      this.em,
      db.deleteFrom('message_template').where('account_id', '=', accountId).where('id', '=', id).returning('id'),
    );
    return gone !== undefined;
  }

  /**
   * One transaction with the account's row locked (the count holds); a recording is copied from
   * the account's message (not hidden) in the statement that saves, so it is the one seen then.
   */
  private async write(
    accountId: number,
    id: number | null,
    draft: MessageTemplateDraft,
    max: number | null,
  ): Promise<MessageTemplateWrite> {
    try {
      return await this.em.transactional(async (tx): Promise<MessageTemplateWrite> => {
        await exec(tx, db.selectFrom('account').select('id').where('id', '=', accountId).forUpdate());
        if (max !== null) {
          const counted = await first(
            tx,
            db
              .selectFrom('message_template')
              .select(sql<number>`count(*)::int`.as('n'))
              .where('account_id', '=', accountId),
          );
          if ((counted?.n ?? 0) >= max) return { kind: 'limit' };
        }
        let media: Partial<RecordingColumns> = {};
        if (draft.media) {
          media = {
            message_type: draft.media.kind,
            recorded_duration_seconds: draft.media.seconds,
            media_key: draft.media.key,
            media_content_type: draft.media.contentType,
            media_bytes: BigInt(draft.media.bytes),
            poster: draft.media.poster === true,
          };
        } else if (draft.recordingMessageId === null) media = NO_RECORDING;
        else if (draft.recordingMessageId !== undefined) {
          const source = await first(tx, recordingOf(accountId, draft.recordingMessageId));
          if (!source) return { kind: 'no_recording' };
          media = source;
        }
        const values = { name: draft.name, text: draft.text, format: draft.format, ...media };
        const row =
          id === null
            ? await first(
                tx,
                db
                  .insertInto('message_template')
                  .values({ account_id: accountId, creator_id: draft.creatorId, ...values })
                  .returning('id'),
              )
            : await first(
                tx,
                db
                  .updateTable('message_template')
                  .set({ ...values, updated_at: sql<Date>`now()` })
                  .where('account_id', '=', accountId)
                  .where('id', '=', id)
                  .returning('id'),
              );
        if (!row) return { kind: 'not_found' };
        const saved = await first(tx, templates(accountId).where('t.id', '=', row.id));
        if (!saved) throw new Error('the message template just saved is not there');
        return { kind: 'saved', template: record(saved) };
      });
    } catch (e) {
      if (nameTaken(e)) return { kind: 'name_taken' };
      throw e;
    }
  }
}
