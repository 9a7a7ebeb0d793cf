import { Migration } from '@mikro-orm/migrations';
import { LIVE_EVENT_SELECTS, liveEventFunction } from './Migration20261129000000_live_events.ts';

/** Picks, from a trigger function's `written` events, the accounts watched now (a new trigger's `told`). */
export const WATCHED_ACCOUNTS = `select string_agg(w.account_id::text, ',') into accounts from live_watch w
          where w.account_id in (select account_id from written) and w.until > now()`;

/**
 * A write wakes the listening processes only for the accounts someone follows live. `NOTIFY`
 * makes every transaction that sends one take a database-wide lock from just before its commit
 * until after it (PostgreSQL keeps notifications in commit order), so committing writes queue
 * behind each other's WAL flush: measured, it halved what creates and intake starts could commit
 * a second on two cores (pgbench of the two statements: 4,500 → 8,000 and 2,800 → 4,200 a
 * second). The events are still written for every change (a browser resumes from them); only the
 * notification waits for a reader.
 *
 * `live_watch` holds, per account, until when a process holds streams of it: a process with a
 * stream of an account writes its row before the stream reads the feed and renews it while
 * streams stay open. The trigger functions, made again here around the same events, notify with
 * the accounts of theirs that are watched now, and with nothing otherwise.
 */
export class Migration20261130100000_live_watch extends Migration {
  override name = 'Migration20261130100000_live_watch';

  override async up(): Promise<void> {
    this.addSql(`create table "live_watch" (
      "account_id" int primary key,
      "until" timestamptz(6) not null);`);
    for (const [name, events] of Object.entries(LIVE_EVENT_SELECTS)) {
      this.addSql(liveEventFunction(name, events, WATCHED_ACCOUNTS));
    }
  }

  override async down(): Promise<void> {
    for (const [name, events] of Object.entries(LIVE_EVENT_SELECTS)) this.addSql(liveEventFunction(name, events));
    this.addSql('drop table "live_watch";');
  }
}
