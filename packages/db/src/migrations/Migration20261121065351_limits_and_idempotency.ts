import { Migration } from '@mikro-orm/migrations';

export class Migration20261121065351_limits_and_idempotency extends Migration {

  override name = 'Migration20261121065351_limits_and_idempotency';

  override up(): void | Promise<void> {
    this.addSql(`create table "idempotency_key" ("account_id" int not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "body" json null, "created_at" timestamptz(6) not null default now(), primary key ("account_id", "key"));`);
    this.addSql(`create index "idempotency_key_created" on "idempotency_key" ("created_at");`);

    this.addSql(`create table "rate_limit_bucket" ("token_id" int not null, "account_id" int not null, "window_start" timestamptz(6) not null, "used" int not null, primary key ("token_id"));`);

    this.addSql(`alter table "account" add "rate_limit" int null;`);

    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`alter table "rate_limit_bucket" add constraint "rate_limit_bucket_token_id_foreign" foreign key ("token_id") references "api_token" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "rate_limit_bucket" add constraint "rate_limit_bucket_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "idempotency_key" cascade;`);
    this.addSql(`drop table if exists "rate_limit_bucket" cascade;`);

    this.addSql(`alter table "account" drop column "rate_limit";`);
  }

}
