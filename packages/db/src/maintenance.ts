import type { EntityManager } from '@mikro-orm/core';
import { query } from './repositories/sql.ts';

/*
 * The tables the service updates or deletes from on every create, delivery or request: queues
 * (webhook deliveries, mail), change marks, rate-limit windows. Each update leaves a dead row
 * version behind; PostgreSQL's autovacuum removes them. A server run with autovacuum off (some CI
 * and benchmark machines are) lets them pile up, and the queue's claim walks ever more of them:
 * creates with a webhook endpoint fell to a third of their speed within minutes on such a server.
 * These few tables are small once vacuumed, so vacuuming them every few seconds costs little.
 */
export const CHURNING_TABLES = [
  'webhook_delivery',
  'webhook_event',
  'webhook_endpoint',
  'webhook_attempt',
  'account_change',
  'rate_limit_bucket',
  'visitor_rate_limit',
  'outgoing_mail',
  'notify_event',
  'notification_digest',
  'workflow_event',
  'workflow_job',
  'api_token',
] as const;

/** True when the server's autovacuum is off, so nothing but us removes dead rows. */
export async function autovacuumIsOff(em: EntityManager): Promise<boolean> {
  const [row] = await query<{ setting: string }>(em, `select current_setting('autovacuum') as setting`);
  return row?.setting === 'off';
}

/**
 * VACUUM the churning tables. SKIP_LOCKED passes over a table another process is vacuuming (every
 * replica runs this), so it never waits. Not inside a transaction: VACUUM cannot run in one.
 */
export async function vacuumChurningTables(em: EntityManager): Promise<void> {
  await query(em, `vacuum (skip_locked) ${CHURNING_TABLES.map((t) => `"${t}"`).join(', ')}`);
}
