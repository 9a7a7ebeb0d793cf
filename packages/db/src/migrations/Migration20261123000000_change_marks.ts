import { Migration } from '@mikro-orm/migrations';

/**
 * Each account's change mark, for conditional requests (ETag / If-None-Match): every statement that
 * changes what the API answers (a create, a message) adds one to one of the account's shards, and
 * the mark is their sum. Spread over shards so that concurrent creates of one account rarely wait
 * for the same row. An account without rows has mark 0.
 */
export class Migration20261123000000_change_marks extends Migration {
  override name = 'Migration20261123000000_change_marks';

  override async up(): Promise<void> {
    this.addSql(
      `create table "account_change" ("account_id" int not null, "shard" smallint not null, "seq" bigint not null default 0, constraint "account_change_pkey" primary key ("account_id", "shard"));`,
    );
    this.addSql(
      `alter table "account_change" add constraint "account_change_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "account_change" cascade;');
  }
}
