import type { TriggerDef } from '@mikro-orm/core';
import { p } from '@mikro-orm/core';

/*
 * Every table carries its account (join tables included), and every query filters by it, so the
 * schema can be sharded by account later without rewriting queries. Creation times are recorded
 * by the database (microsecond precision) rather than by the JS clock (milliseconds).
 */

export const createdAt = () => p.datetime().columnType('timestamptz(6)').defaultRaw('now()');

/**
 * A statement-level trigger that writes the live feed through one of the `live_*` functions (made
 * by the live-events migrations, which hold their bodies). Declared by its DDL: the schema
 * generator then checks that it exists.
 */
export function liveTrigger(
  name: string,
  event: 'insert' | 'update' | 'delete',
  table: string,
  transition: string,
  fn: string,
): TriggerDef {
  return {
    name,
    timing: 'after',
    events: [event],
    forEach: 'statement',
    expression: `create trigger "${name}" after ${event} on "${table}" referencing ${transition} for each statement execute function "${fn}"();`,
  };
}
