import { Migration } from '@mikro-orm/migrations';

/**
 * People on the conversation pages: sessions and one-time sign-in links (stored as SHA-256 of
 * their tokens, never the tokens), mail waiting to be sent, counters for the forms' rate limits,
 * and the form token of a posted reply, so that a resubmitted form posts once.
 */
export class Migration20261122300000_people extends Migration {
  override name = 'Migration20261122300000_people';

  override async up(): Promise<void> {
    this.addSql(`create table "site_session" ("id" serial primary key, "account_id" int not null, "user_id" int not null, "token_hash" varchar(64) not null, "created_at" timestamptz(6) not null default now(), "expires_at" timestamptz(6) not null);`);
    this.addSql(`alter table "site_session" add constraint "site_session_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "site_session_expires" on "site_session" ("expires_at");`);
    this.addSql(`alter table "site_session" add constraint "site_session_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
    this.addSql(`alter table "site_session" add constraint "site_session_user_id_foreign" foreign key ("user_id") references "account_user" ("id") on delete cascade;`);

    this.addSql(`create table "sign_in_link" ("id" serial primary key, "account_id" int not null, "user_id" int not null, "token_hash" varchar(64) not null, "return_path" varchar(300) not null, "pending_reply" jsonb null, "created_at" timestamptz(6) not null default now(), "expires_at" timestamptz(6) not null, "used_at" timestamptz(6) null);`);
    this.addSql(`alter table "sign_in_link" add constraint "sign_in_link_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "sign_in_link_expires" on "sign_in_link" ("expires_at");`);
    this.addSql(`alter table "sign_in_link" add constraint "sign_in_link_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
    this.addSql(`alter table "sign_in_link" add constraint "sign_in_link_user_id_foreign" foreign key ("user_id") references "account_user" ("id") on delete cascade;`);

    this.addSql(`create table "outgoing_mail" ("id" serial primary key, "account_id" int not null, "recipient" varchar(320) not null, "subject" varchar(255) not null, "body" text null, "created_at" timestamptz(6) not null default now(), "next_attempt_at" timestamptz(6) not null default now(), "attempts" int not null default 0, "last_error" text null, "sent_at" timestamptz(6) null);`);
    this.addSql(`create index "outgoing_mail_due" on "outgoing_mail" ("next_attempt_at") where "sent_at" is null;`);
    this.addSql(`alter table "outgoing_mail" add constraint "outgoing_mail_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`create table "visitor_rate_limit" ("key" varchar(400) not null, "window_start" timestamptz(6) not null, "used" int not null, primary key ("key"));`);

    this.addSql(`alter table "message" add "submit_key" varchar(64) null;`);
    this.addSql(`create unique index "message_account_submit_key" on "message" ("account_id", "submit_key") where "submit_key" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index "message_account_submit_key";');
    this.addSql('alter table "message" drop column "submit_key";');
    this.addSql('drop table if exists "visitor_rate_limit" cascade;');
    this.addSql('drop table if exists "outgoing_mail" cascade;');
    this.addSql('drop table if exists "sign_in_link" cascade;');
    this.addSql('drop table if exists "site_session" cascade;');
  }
}
