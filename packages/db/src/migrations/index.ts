import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121043346_initial } from './Migration20261121043346_initial.ts';

/** Listed explicitly, in order: no folder scanning (which Deno and bundlers cannot rely on). */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121043346_initial', class: Migration20261121043346_initial },
];
