import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook events are fanned out to their endpoints by the workers, not by the statement that
 * creates them: a create writes its event row alone (one row, one small index entry more than
 * without webhooks), and a worker turns undispatched events into one delivery per subscribed
 * endpoint. Events written before this migration already have their deliveries.
 */
export class Migration20261123100000_webhook_dispatch extends Migration {
  override name = 'Migration20261123100000_webhook_dispatch';

  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_event" add column "dispatched" boolean not null default true;`);
    this.addSql(`alter table "webhook_event" alter column "dispatched" set default false;`);
    this.addSql(`create index "webhook_event_undispatched" on "webhook_event" ("id") where not "dispatched";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_event_undispatched";`);
    this.addSql(`alter table "webhook_event" drop column "dispatched";`);
  }
}
