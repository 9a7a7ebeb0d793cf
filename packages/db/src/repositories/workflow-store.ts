import type { WorkflowDefinitionRecord, WorkflowReferences, WorkflowStep, WorkflowStore } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { fromJson, query } from './sql.ts';

/** An account's workflows as its team manages them (API, CLI, site, seeds): every statement scoped to the account. */

interface Row {
  id: number;
  name: string;
  steps: unknown;
  disabled_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
}

const COLUMNS = 'id, name, steps, disabled_at, created_at, updated_at';

const record = (r: Row): WorkflowDefinitionRecord => ({
  id: r.id,
  name: r.name,
  steps: fromJson<unknown[]>(r.steps),
  disabledAt: r.disabled_at === null ? null : new Date(r.disabled_at),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

export class PgWorkflowStore implements WorkflowStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async list(accountId: number): Promise<WorkflowDefinitionRecord[]> {
    const rows = await query<Row>(this.em, `select ${COLUMNS} from workflow where account_id = ? order by id`, [
      accountId,
    ]);
    return rows.map(record);
  }

  async find(accountId: number, id: number): Promise<WorkflowDefinitionRecord | null> {
    const [row] = await query<Row>(this.em, `select ${COLUMNS} from workflow where account_id = ? and id = ?`, [
      accountId,
      id,
    ]);
    return row ? record(row) : null;
  }

  create(
    accountId: number,
    workflow: { name: string; steps: WorkflowStep[] },
    max: number,
  ): Promise<WorkflowDefinitionRecord | null> {
    // The account's row is locked while its workflows are counted: two creates at once are counted in turn.
    return this.em.transactional(async (tx) => {
      await query(tx, 'select id from account where id = ? for update', [accountId]);
      const [row] = await query<Row>(
        tx,
        `insert into workflow (account_id, name, steps)
         select ?, ?, ?::jsonb where (select count(*) from workflow where account_id = ?) < ?
         returning ${COLUMNS}`,
        [accountId, workflow.name, JSON.stringify(workflow.steps), accountId, max],
      );
      return row ? record(row) : null;
    });
  }

  async change(
    accountId: number,
    id: number,
    change: { name?: string | undefined; steps?: WorkflowStep[] | undefined; disabled?: boolean | undefined },
  ): Promise<WorkflowDefinitionRecord | null> {
    const [row] = await query<Row>(
      this.em,
      `update workflow set name = coalesce(?, name), steps = coalesce(?::jsonb, steps),
         disabled_at = case when ?::boolean is null then disabled_at when ?::boolean then coalesce(disabled_at, now()) end,
         updated_at = now()
       where account_id = ? and id = ?
       returning ${COLUMNS}`,
      [
        change.name ?? null,
        change.steps === undefined ? null : JSON.stringify(change.steps),
        change.disabled ?? null,
        change.disabled ?? null,
        accountId,
        id,
      ],
    );
    return row ? record(row) : null;
  }

  async references(
    accountId: number,
    emails: string[],
    messageIds: number[],
    templateIds: number[],
  ): Promise<WorkflowReferences> {
    const people = await query<{ email: string; team_role: string | null }>(
      this.em,
      'select lower(email) as email, team_role from account_user where account_id = ? and lower(email) in (select lower(x) from jsonb_array_elements_text(?::jsonb) x)',
      [accountId, JSON.stringify(emails)],
    );
    const recordings = await query<{ id: number }>(
      this.em,
      `select id from message where account_id = ? and id in (select x::int from jsonb_array_elements_text(?::jsonb) x) and media_key is not null and hidden_at is null`,
      [accountId, JSON.stringify(messageIds)],
    );
    const templates = await query<{ id: number }>(
      this.em,
      'select id from message_template where account_id = ? and id in (select x::int from jsonb_array_elements_text(?::jsonb) x)',
      [accountId, JSON.stringify(templateIds)],
    );
    return {
      team: new Set(people.filter((p) => p.team_role !== null).map((p) => p.email)),
      people: new Set(people.map((p) => p.email)),
      recordings: new Set(recordings.map((r) => Number(r.id))),
      templates: new Set(templates.map((t) => Number(t.id))),
    };
  }
}
