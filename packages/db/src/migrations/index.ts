import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121043346_initial } from './Migration20261121043346_initial.ts';
import { Migration20261121065351_limits_and_idempotency } from './Migration20261121065351_limits_and_idempotency.ts';
import { Migration20261122100000_comparison_keys } from './Migration20261122100000_comparison_keys.ts';
import { Migration20261122200000_account_host } from './Migration20261122200000_account_host.ts';
import { Migration20261122300000_people } from './Migration20261122300000_people.ts';
import { Migration20261122400000_webhooks } from './Migration20261122400000_webhooks.ts';
import { Migration20261123000000_change_marks } from './Migration20261123000000_change_marks.ts';
import { Migration20261123100000_webhook_dispatch } from './Migration20261123100000_webhook_dispatch.ts';

/** Listed explicitly, in order: no folder scanning (which Deno and bundlers cannot rely on). */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121043346_initial', class: Migration20261121043346_initial },
  {
    name: 'Migration20261121065351_limits_and_idempotency',
    class: Migration20261121065351_limits_and_idempotency,
  },
  { name: 'Migration20261122100000_comparison_keys', class: Migration20261122100000_comparison_keys },
  { name: 'Migration20261122200000_account_host', class: Migration20261122200000_account_host },
  { name: 'Migration20261122300000_people', class: Migration20261122300000_people },
  { name: 'Migration20261122400000_webhooks', class: Migration20261122400000_webhooks },
  { name: 'Migration20261123000000_change_marks', class: Migration20261123000000_change_marks },
  { name: 'Migration20261123100000_webhook_dispatch', class: Migration20261123100000_webhook_dispatch },
];
