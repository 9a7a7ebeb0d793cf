import type { EntityManager } from '@mikro-orm/core';
import { query } from './repositories/sql.ts';

/*
 * The tables the service updates or deletes from on every create, delivery or request: queues
 * (webhook deliveries, mail), change marks, rate-limit windows. Each update leaves a dead row
 * version behind; PostgreSQL's autovacuum removes them. A server run with autovacuum off (some CI
 * and benchmark machines are) lets them pile up, and the queue's claim walks ever more of them:
 * creates with a webhook endpoint fell to a third of their speed within minutes on such a server.
 * These few tables are small once vacuumed, so vacuuming them every few seconds costs little.
 *
 * Such a server never ANALYZEs them either, and a table without statistics misleads the planner:
 * it takes `sent_at is null` to hold for 0.5 % of the mail queue, so with 8,000 mails queued
 * (a round of intake starts) each claim of ten read and sorted all of them off a bitmap scan
 * (8 ms) instead of walking the due index for ten (0.1 ms), and the mail worker took a tenth of
 * PostgreSQL's time during the round. Their shape (which columns are null, how the dates run)
 * changes slowly, so an ANALYZE now and then is enough.
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
 * VACUUM the churning tables, and ANALYZE them too when `analyze` says so. SKIP_LOCKED passes over
 * a table another process is vacuuming (every replica runs this), so it never waits. Not inside a
 * transaction: VACUUM cannot run in one.
 */
export async function vacuumChurningTables(em: EntityManager, options: { analyze?: boolean } = {}): Promise<void> {
  const how = options.analyze ? 'skip_locked, analyze' : 'skip_locked';
  await query(em, `vacuum (${how}) ${CHURNING_TABLES.map((t) => `"${t}"`).join(', ')}`);
}
