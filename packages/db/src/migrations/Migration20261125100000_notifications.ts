import { Migration } from '@mikro-orm/migrations';

/**
 * People are told by mail when someone answers. A posted message leaves one `notify_event` row (in
 * the message's own statement, whatever the number of members); a worker turns it into one pending
 * `notification_digest` per person and conversation, due a batch window after its first message,
 * and sends each due digest as one mail. `notification_mute` holds who asked for no more mail (a
 * conversation, or 0: all of the account's); `conversation_follower` who asked for a public
 * conversation's mail without being a member. The links in those mails are signed with a secret
 * every replica reads from `site_secret`, made here from PostgreSQL's strong random source.
 */
export class Migration20261125100000_notifications extends Migration {
  override name = 'Migration20261125100000_notifications';

  override async up(): Promise<void> {
    this.addSql(`create table "notify_event" (
      "id" bigserial primary key,
      "account_id" int not null references "account" ("id") on delete cascade,
      "conversation_id" int not null,
      "message_id" int not null,
      "author_id" int null);`);
    this.addSql(`create table "notification_digest" (
      "conversation_id" int not null references "conversation" ("id") on delete cascade,
      "user_id" int not null references "account_user" ("id") on delete cascade,
      "account_id" int not null,
      "first_message_id" int not null,
      "due_at" timestamptz(6) not null,
      primary key ("conversation_id", "user_id"));`);
    this.addSql(`create index "notification_digest_due" on "notification_digest" ("due_at");`);
    this.addSql(`create table "notification_mute" (
      "account_id" int not null references "account" ("id") on delete cascade,
      "user_id" int not null references "account_user" ("id") on delete cascade,
      "conversation_id" int not null default 0,
      primary key ("account_id", "user_id", "conversation_id"));`);
    this.addSql(`create table "conversation_follower" (
      "conversation_id" int not null references "conversation" ("id") on delete cascade,
      "user_id" int not null references "account_user" ("id") on delete cascade,
      "account_id" int not null,
      primary key ("conversation_id", "user_id"));`);
    this.addSql(`create table "site_secret" ("name" varchar(64) primary key, "value" text not null);`);
    this.addSql(
      `insert into "site_secret" ("name", "value") values ('mail_links', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));`,
    );
    this.addSql(`alter table "outgoing_mail" add column "headers" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "outgoing_mail" drop column "headers";`);
    for (const table of ['site_secret', 'conversation_follower', 'notification_mute', 'notification_digest', 'notify_event']) {
      this.addSql(`drop table if exists "${table}" cascade;`);
    }
  }
}
