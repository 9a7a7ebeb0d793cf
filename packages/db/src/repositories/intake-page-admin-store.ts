import type { IntakePageAdminStore, IntakePageDefinition, IntakePageDraft, IntakePageWrite } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { markChange } from './change-marks.ts';
import { query, violatesUnique } from './sql.ts';

/** An account's intake pages as its team manages them; every statement scoped to the account. */

interface Row {
  id: number;
  key: string;
  name: string;
  title: string;
  welcome_text: string;
  welcome_message_id: number | null;
  is_primary: boolean;
  workflow_id: number | null;
  allow_anonymous: boolean;
  team: string[] | null;
  disabled_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
}

const SELECT = `select p.id, p.key, p.name, p.title, p.welcome_text, p.welcome_message_id, p.is_primary, p.workflow_id, p.allow_anonymous,
    p.disabled_at, p.created_at, p.updated_at,
    (select coalesce(json_agg(u.email order by u.id), '[]') from intake_page_member m
       join account_user u on u.id = m.user_id where m.intake_page_id = p.id) as team
  from intake_page p`;

const record = (r: Row): IntakePageDefinition => ({
  id: r.id,
  key: r.key,
  name: r.name,
  title: r.title,
  welcomeText: r.welcome_text,
  welcomeMessageId: r.welcome_message_id,
  primary: r.is_primary,
  workflowId: r.workflow_id,
  allowAnonymous: r.allow_anonymous,
  team: typeof r.team === 'string' ? JSON.parse(r.team) : (r.team ?? []),
  disabledAt: r.disabled_at === null ? null : new Date(r.disabled_at),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const keyTaken = (e: unknown): boolean => violatesUnique(e, 'intake_page_account_key_unique');

export class PgIntakePageAdminStore implements IntakePageAdminStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async list(accountId: number): Promise<IntakePageDefinition[]> {
    return (await query<Row>(this.em, `${SELECT} where p.account_id = ? order by p.id`, [accountId])).map(record);
  }

  async find(accountId: number, id: number): Promise<IntakePageDefinition | null> {
    const [row] = await query<Row>(this.em, `${SELECT} where p.account_id = ? and p.id = ?`, [accountId, id]);
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
        await query(tx, 'select id from account where id = ? for update', [accountId]);
        if (max !== null) {
          const [n] = await query<{ n: number }>(
            tx,
            'select count(*)::int as n from intake_page where account_id = ?',
            [accountId],
          );
          if ((n?.n ?? 0) >= max) return { kind: 'limit' };
        }
        if (page.primary) {
          await query(tx, 'update intake_page set is_primary = false where account_id = ? and is_primary and id <> ?', [
            accountId,
            id ?? 0,
          ]);
        }
        const values = [
          page.name,
          page.key,
          page.title,
          page.welcomeText,
          page.welcomeMessageId,
          page.primary,
          page.workflowId,
          page.allowAnonymous,
          page.disabled,
        ];
        const [row] =
          id === null
            ? await query<{ id: number }>(
                tx,
                `insert into intake_page (account_id, name, key, title, welcome_text, welcome_message_id, is_primary,
                   workflow_id, allow_anonymous, disabled_at)
                 values (?, ?, ?, ?, ?, ?, ?, ?, ?, case when ? then now() end) returning id`,
                [accountId, ...values],
              )
            : await query<{ id: number }>(
                tx,
                `update intake_page set name = ?, key = ?, title = ?, welcome_text = ?, welcome_message_id = ?,
                   is_primary = ?, workflow_id = ?,
                   allow_anonymous = ?, disabled_at = case when ? then coalesce(disabled_at, now()) end, updated_at = now()
                 where account_id = ? and id = ? returning id`,
                [...values, accountId, id],
              );
        if (!row) return { kind: 'not_found' };
        await query(tx, 'delete from intake_page_member where intake_page_id = ? and account_id = ?', [
          row.id,
          accountId,
        ]);
        if (page.team.length > 0) {
          await query(
            tx,
            `insert into intake_page_member (intake_page_id, user_id, account_id)
             select ?, x::int, ? from jsonb_array_elements_text(?::jsonb) x`,
            [row.id, accountId, JSON.stringify(page.team)],
          );
        }
        await markChange(tx, accountId);
        const [saved] = await query<Row>(tx, `${SELECT} where p.account_id = ? and p.id = ?`, [accountId, row.id]);
        return { kind: 'saved', page: record(saved as Row) };
      });
    } catch (e) {
      if (keyTaken(e)) return { kind: 'key_taken' };
      throw e;
    }
  }

  async teamIds(accountId: number, emails: string[]): Promise<Map<string, number>> {
    const rows = await query<{ id: number; email: string }>(
      this.em,
      `select id, lower(email) as email from account_user where account_id = ? and team_role is not null
         and lower(email) in (select lower(x) from jsonb_array_elements_text(?::jsonb) x)`,
      [accountId, JSON.stringify(emails)],
    );
    return new Map(rows.map((r) => [r.email, r.id]));
  }

  async hasRecording(accountId: number, messageId: number): Promise<boolean> {
    const rows = await query(
      this.em,
      'select 1 from message where account_id = ? and id = ? and media_key is not null and hidden_at is null',
      [accountId, messageId],
    );
    return rows.length > 0;
  }

  async hasWorkflow(accountId: number, workflowId: number): Promise<boolean> {
    const rows = await query(this.em, 'select 1 from workflow where account_id = ? and id = ?', [
      accountId,
      workflowId,
    ]);
    return rows.length > 0;
  }
}
