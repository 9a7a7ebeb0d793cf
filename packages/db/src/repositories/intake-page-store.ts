import { type IntakePageRecord, type IntakePageStore, runnableSteps } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import type { InferResult } from 'kysely';
import { db, run, slot, statement } from './query.ts';

/** An account's enabled pages, each with its workflow while that is enabled. */
export const enabledPages = () =>
  db
    .selectFrom('intake_page as ip')
    .leftJoin('workflow as w', (j) =>
      j
        .onRef('w.id', '=', 'ip.workflow_id')
        .onRef('w.account_id', '=', 'ip.account_id')
        .on('w.disabled_at', 'is', null),
    )
    .select(['ip.id', 'ip.is_primary', 'w.id as workflow_id', 'w.name as workflow_name', 'w.steps as workflow_steps'])
    .where('ip.account_id', '=', slot<number>('account'))
    .where('ip.disabled_at', 'is', null);

/** The columns of a page and its enabled workflow that a create reads (mapped by `intakePageRecord`). */
export type IntakePageRow = InferResult<ReturnType<typeof enabledPages>>[number];

const BY_ID = statement('intake_page_by_id', enabledPages().where('ip.id', '=', slot<number>('id')));
const PRIMARY = statement(
  'intake_page_primary',
  enabledPages().where((eb) => eb.ref('ip.is_primary')),
);

/** A page row (with its workflow's columns) as the record a create reads: the one mapping of both. */
export function intakePageRecord(row: IntakePageRow): IntakePageRecord {
  return {
    id: row.id,
    primary: row.is_primary,
    workflow:
      row.workflow_id === null
        ? null
        : { id: row.workflow_id, name: row.workflow_name ?? '', steps: runnableSteps(row.workflow_steps ?? []) },
  };
}

export class PgIntakePageStore implements IntakePageStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async findById(account: number, id: number): Promise<IntakePageRecord | null> {
    const [row] = await run(this.em, BY_ID, { account, id });
    return row ? intakePageRecord(row) : null;
  }

  async findPrimary(account: number): Promise<IntakePageRecord | null> {
    const [row] = await run(this.em, PRIMARY, { account });
    return row ? intakePageRecord(row) : null;
  }
}
