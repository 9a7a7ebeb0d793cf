import { Migration } from '@mikro-orm/migrations';

/**
 * The team's inbox lists an account's conversations by their latest activity (the newest message,
 * or the creation when there is none), and marks what each team member has not opened since it
 * changed. `last_activity_at` is kept by the statements that write messages; `conversation_read`
 * holds when each person last opened each conversation.
 */
export class Migration20261125200000_inbox extends Migration {
  override name = 'Migration20261125200000_inbox';

  override async up(): Promise<void> {
    this.addSql(`alter table "conversation" add column "last_activity_at" timestamptz(6) null;`);
    this.addSql(`update "conversation" c set "last_activity_at" = coalesce(
      (select max(m."created_at") from "message" m where m."conversation_id" = c."id" and m."account_id" = c."account_id"),
      c."created_at");`);
    this.addSql(
      `alter table "conversation" alter column "last_activity_at" set default now(), alter column "last_activity_at" set not null;`,
    );
    this.addSql(
      `create index "conversation_account_activity" on "conversation" ("account_id", "last_activity_at" desc, "id" desc);`,
    );
    this.addSql(`create table "conversation_read" (
      "user_id" int not null references "account_user" ("id") on delete cascade,
      "conversation_id" int not null references "conversation" ("id") on delete cascade,
      "account_id" int not null,
      "read_at" timestamptz(6) not null default now(),
      primary key ("user_id", "conversation_id"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "conversation_read" cascade;`);
    this.addSql(`drop index if exists "conversation_account_activity";`);
    this.addSql(`alter table "conversation" drop column "last_activity_at";`);
  }
}
