import { Migration } from '@mikro-orm/migrations';

/**
 * Passes get a way to end and a one-time code. A device that started a conversation on an intake
 * page reads it by a pass (a signed cookie of grants, each with its time); the team ends every
 * such device's access to one conversation by moving `passes_valid_after` to now, and a pass
 * issued before it opens nothing there. An embed's start reaches its frame by a one-time code
 * (`pass_code`, kept hashed for ten minutes, taken once) instead of a pass in the address.
 */
export class Migration20261201000000_visitor_passes extends Migration {
  override name = 'Migration20261201000000_visitor_passes';

  override async up(): Promise<void> {
    this.addSql('alter table "conversation" add column "passes_valid_after" timestamptz(6) null;');
    this.addSql(`create table "pass_code" (
      "code_hash" varchar(64) primary key,
      "account_id" int not null references "account" ("id") on delete cascade,
      "grant" varchar(64) not null,
      "expires_at" timestamptz(6) not null);`);
    this.addSql('create index "pass_code_expires" on "pass_code" ("expires_at");');
  }

  override async down(): Promise<void> {
    this.addSql('drop table "pass_code";');
    this.addSql('alter table "conversation" drop column "passes_valid_after";');
  }
}
