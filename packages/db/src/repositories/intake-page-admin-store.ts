import type {
  IntakePageAdminStore,
  IntakePageDefinition,
  IntakePageDraft,
  IntakePageWrite,
  TeamRecording,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type InferResult, sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { markChange } from './change-marks.ts';
import { db, exec, first } from './query.ts';
import { violatesUnique } from './sql.ts';

/** An account's intake pages as its team manages them; every statement scoped to the account. */

/** The account's pages with their teams' addresses (mapped by `record`). */
const pages = (accountId: number) =>
  db
    .selectFrom('intake_page as p')
    .select([
      'p.id',
      'p.key',
      'p.name',
      'p.title',
      'p.welcome_text',
      'p.welcome_message_id',
      'p.conversation_title',
      'p.is_primary',
      'p.workflow_id',
      'p.allow_anonymous',
      'p.disabled_at',
      'p.created_at',
      'p.updated_at',
    ])
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('intake_page_member as m')
          .innerJoin('account_user as u', 'u.id', 'm.user_id')
          .select('u.email')
          .whereRef('m.intake_page_id', '=', 'p.id')
          .orderBy('u.id'),
      ).as('team'),
    )
    .where('p.account_id', '=', accountId);

const record = (r: InferResult<ReturnType<typeof pages>>[number]): IntakePageDefinition => ({
  id: r.id,
  key: r.key,
  name: r.name,
  title: r.title,
  welcomeText: r.welcome_text,
  welcomeMessageId: r.welcome_message_id,
  conversationTitle: r.conversation_title,
  primary: r.is_primary,
  workflowId: r.workflow_id,
  allowAnonymous: r.allow_anonymous,
  team: r.team.map((member) => member.email),
  disabledAt: r.disabled_at === null ? null : new Date(r.disabled_at),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const keyTaken = (e: unknown): boolean => violatesUnique(e, 'intake_page_account_key_unique');

const now = sql<Date>`now()`;

export class PgIntakePageAdminStore implements IntakePageAdminStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async list(accountId: number): Promise<IntakePageDefinition[]> {
    return (await exec(this.em, pages(accountId).orderBy('p.id'))).map(record);
  }

  async find(accountId: number, id: number): Promise<IntakePageDefinition | null> {
    const row = await first(this.em, pages(accountId).where('p.id', '=', id));
    return row ? record(row) : null;
  }

  create(accountId: number, page: IntakePageDraft, max: number): Promise<IntakePageWrite> {
    return this.write(accountId, null, page, max);
  }

  change(accountId: number, id: number, page: IntakePageDraft): Promise<IntakePageWrite> {
    return this.write(accountId, id, page, null);
  }

  /**
   * One transaction with the account's row locked: the count, the primary page moving, the row and
   * its team change together. A page's change moves the change mark (it decides what creates apply).
   */
  private async write(
    accountId: number,
    id: number | null,
    page: IntakePageDraft,
    max: number | null,
  ): Promise<IntakePageWrite> {
    try {
      return await this.em.transactional(async (tx): Promise<IntakePageWrite> => {
        await exec(tx, db.selectFrom('account').select('id').where('id', '=', accountId).forUpdate());
        if (max !== null) {
          const counted = await first(
            tx,
            db.selectFrom('intake_page').select(sql<number>`count(*)::int`.as('n')).where('account_id', '=', accountId),
          );
          if ((counted?.n ?? 0) >= max) return { kind: 'limit' };
        }
        if (page.primary) {
          await exec(
            tx,
            db
              .updateTable('intake_page')
              .set({ is_primary: false })
              .where('account_id', '=', accountId)
              .where('is_primary', '=', true)
              .where('id', '<>', id ?? 0),
          );
        }
        const values = {
          name: page.name,
          key: page.key,
          title: page.title,
          welcome_text: page.welcomeText,
          welcome_message_id: page.welcomeMessageId,
          conversation_title: page.conversationTitle,
          is_primary: page.primary,
          workflow_id: page.workflowId,
          allow_anonymous: page.allowAnonymous,
        };
        const row =
          id === null
            ? await first(
                tx,
                db
                  .insertInto('intake_page')
                  .values({ account_id: accountId, ...values, disabled_at: page.disabled ? now : null })
                  .returning('id'),
              )
            : await first(
                tx,
                db
                  .updateTable('intake_page')
                  .set({
                    ...values,
                    // Disabled stays disabled since when it was.
                    disabled_at: page.disabled ? sql<Date>`coalesce(disabled_at, now())` : null,
                    updated_at: now,
                  })
                  .where('account_id', '=', accountId)
                  .where('id', '=', id)
                  .returning('id'),
              );
        if (!row) return { kind: 'not_found' };
        await exec(
          tx,
          db.deleteFrom('intake_page_member').where('intake_page_id', '=', row.id).where('account_id', '=', accountId),
        );
        if (page.team.length > 0) {
          await exec(
            tx,
            db
              .insertInto('intake_page_member')
              .values(page.team.map((user) => ({ intake_page_id: row.id, user_id: user, account_id: accountId }))),
          );
        }
        await markChange(tx, accountId);
        const saved = await first(tx, pages(accountId).where('p.id', '=', row.id));
        if (!saved) throw new Error('the intake page just saved is not there');
        return { kind: 'saved', page: record(saved) };
      });
    } catch (e) {
      if (keyTaken(e)) return { kind: 'key_taken' };
      throw e;
    }
  }

  async teamIds(accountId: number, emails: string[]): Promise<Map<string, number>> {
    if (emails.length === 0) return new Map();
    const rows = await exec(
      this.em,
      db
        .selectFrom('account_user')
        .select(['id', sql<string>`lower(email)`.as('email')])
        .where('account_id', '=', accountId)
        .where('team_role', 'is not', null)
        // One parameter however many addresses: a JSON array, compared ignoring case.
        .where(
          sql<boolean>`lower(email) in (select lower(x) from jsonb_array_elements_text(${JSON.stringify(emails)}::jsonb) x)`,
        ),
    );
    return new Map(rows.map((r) => [r.email, r.id]));
  }

  async hasRecording(accountId: number, messageId: number): Promise<boolean> {
    const found = await first(
      this.em,
      db
        .selectFrom('message')
        .select('id')
        .where('account_id', '=', accountId)
        .where('id', '=', messageId)
        .where('media_key', 'is not', null)
        .where('hidden_at', 'is', null),
    );
    return found !== undefined;
  }

  async teamRecordings(accountId: number, limit: number): Promise<TeamRecording[]> {
    const rows = await exec(
      this.em,
      db
        .selectFrom('message as m')
        .innerJoin('account_user as u', (j) =>
          j.onRef('u.id', '=', 'm.author_id').onRef('u.account_id', '=', 'm.account_id'),
        )
        .innerJoin('conversation as c', 'c.id', 'm.conversation_id')
        .select(['m.id', 'm.message_type', 'm.recorded_duration_seconds', 'u.name', 'c.title', 'm.created_at'])
        .where('m.account_id', '=', accountId)
        .where('m.media_key', 'is not', null)
        .where('m.hidden_at', 'is', null)
        .where('u.team_role', 'is not', null)
        .orderBy('m.id', 'desc')
        .limit(limit),
    );
    return rows.map((r) => ({
      messageId: r.id,
      kind: r.message_type,
      seconds: r.recorded_duration_seconds,
      author: r.name,
      conversationTitle: r.title,
      createdAt: new Date(r.created_at),
    }));
  }

  async hasWorkflow(accountId: number, workflowId: number): Promise<boolean> {
    const found = await first(
      this.em,
      db.selectFrom('workflow').select('id').where('account_id', '=', accountId).where('id', '=', workflowId),
    );
    return found !== undefined;
  }
}
