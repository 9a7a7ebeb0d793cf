import { Migration } from '@mikro-orm/migrations';

/**
 * A visitor who started a conversation on an intake page is recognised on that device: their
 * browser holds a pass (a cookie; its hash is kept here), good for the conversations it started
 * and nothing else. `user_id` is the person the visitor gave (null for an anonymous start).
 */
export class Migration20261128000000_conversation_passes extends Migration {
  override name = 'Migration20261128000000_conversation_passes';

  override async up(): Promise<void> {
    this.addSql(`create table "conversation_pass" (
      "token_hash" varchar(64) not null,
      "conversation_id" int not null references "conversation" ("id") on delete cascade,
      "account_id" int not null references "account" ("id") on delete cascade,
      "user_id" int null references "account_user" ("id") on delete cascade,
      "created_at" timestamptz(6) not null default now(),
      primary key ("token_hash", "conversation_id"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "conversation_pass";`);
  }
}
