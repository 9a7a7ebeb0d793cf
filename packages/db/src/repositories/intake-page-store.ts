import { type IntakePageRecord, type IntakePageStore, runnableSteps } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Prepared, runPrepared } from './prepared.ts';
import { fromJson } from './sql.ts';

export interface IntakePageRow {
  id: number;
  is_primary: boolean;
  workflow_id: number | null;
  workflow_name: string | null;
  workflow_steps: unknown;
}

const SELECT = `
  select ip.id, ip.is_primary, w.id as workflow_id, w.name as workflow_name, w.steps as workflow_steps
  from intake_page ip left join workflow w on w.id = ip.workflow_id and w.account_id = ip.account_id and w.disabled_at is null
  where ip.account_id = $1 and ip.disabled_at is null`;
const BY_ID: Prepared = { name: 'intake_page_by_id', text: `${SELECT} and ip.id = $2` };
const PRIMARY: Prepared = { name: 'intake_page_primary', text: `${SELECT} and ip.is_primary` };

/** A page row (with its workflow's columns) as the record a create reads: the one mapping of both. */
export function intakePageRecord(row: IntakePageRow): IntakePageRecord {
  return {
    id: row.id,
    primary: row.is_primary,
    workflow:
      row.workflow_id === null
        ? null
        : {
            id: row.workflow_id,
            name: row.workflow_name ?? '',
            steps: runnableSteps(fromJson<unknown[]>(row.workflow_steps)),
          },
  };
}

export class PgIntakePageStore implements IntakePageStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async findById(accountId: number, id: number): Promise<IntakePageRecord | null> {
    const [row] = await runPrepared<IntakePageRow>(this.em, BY_ID, [accountId, id]);
    return row ? intakePageRecord(row) : null;
  }

  async findPrimary(accountId: number): Promise<IntakePageRecord | null> {
    const [row] = await runPrepared<IntakePageRow>(this.em, PRIMARY, [accountId]);
    return row ? intakePageRecord(row) : null;
  }
}
