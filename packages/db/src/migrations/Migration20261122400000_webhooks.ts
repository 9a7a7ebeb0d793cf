import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks: an account's endpoints, the events its conversations and messages emit (written by the
 * same statement as the row they announce: a transactional outbox), one delivery per event and
 * endpoint, and the attempts each delivery made.
 */
export class Migration20261122400000_webhooks extends Migration {
  override name = 'Migration20261122400000_webhooks';

  override async up(): Promise<void> {
    this.addSql(`create table "webhook_endpoint" ("id" serial primary key, "account_id" int not null, "url" varchar(2048) not null, "secret" varchar(100) not null, "events" text[] not null, "created_at" timestamptz(6) not null default now(), "failing_since" timestamptz(6) null, "disabled_at" timestamptz(6) null);`);
    this.addSql(`create index "webhook_endpoint_account" on "webhook_endpoint" ("account_id") where "disabled_at" is null;`);
    this.addSql(`alter table "webhook_endpoint" add constraint "webhook_endpoint_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`create table "webhook_event" ("id" bigserial primary key, "account_id" int not null, "type" varchar(64) not null, "conversation_id" int not null, "message_id" int null, "payload" jsonb null, "created_at" timestamptz(6) not null default now());`);
    this.addSql(`alter table "webhook_event" add constraint "webhook_event_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`create table "webhook_delivery" ("id" bigserial primary key, "account_id" int not null, "event_id" bigint not null, "endpoint_id" int not null, "status" varchar(16) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz(6) not null default now(), "last_status" int null, "last_error" text null, "delivered_at" timestamptz(6) null, "created_at" timestamptz(6) not null default now());`);
    // Workers take the oldest pending deliveries that are due: walked in id order, most are.
    this.addSql(`create index "webhook_delivery_pending" on "webhook_delivery" ("id") where "status" = 'pending';`);
    this.addSql(`create index "webhook_delivery_event" on "webhook_delivery" ("event_id");`);
    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "webhook_event" ("id") on delete cascade;`);
    this.addSql(`alter table "webhook_delivery" add constraint "webhook_delivery_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoint" ("id") on delete cascade;`);

    this.addSql(`create table "webhook_attempt" ("id" bigserial primary key, "delivery_id" bigint not null, "at" timestamptz(6) not null default now(), "status" int null, "latency_ms" int not null, "error" text null);`);
    this.addSql(`create index "webhook_attempt_delivery" on "webhook_attempt" ("delivery_id", "id");`);
    this.addSql(`alter table "webhook_attempt" add constraint "webhook_attempt_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id") on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "webhook_attempt" cascade;');
    this.addSql('drop table if exists "webhook_delivery" cascade;');
    this.addSql('drop table if exists "webhook_event" cascade;');
    this.addSql('drop table if exists "webhook_endpoint" cascade;');
  }
}
