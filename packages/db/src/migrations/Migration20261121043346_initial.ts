import { Migration } from '@mikro-orm/migrations';

export class Migration20261121043346_initial extends Migration {

  override name = 'Migration20261121043346_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "account" ("id" serial primary key, "key" varchar(32) not null, "name" varchar(255) not null, "host" varchar(255) not null, "default_anyone_can_post" boolean not null default true, "default_allow_anonymous_messages" boolean not null default true, "default_allow_search_engines" boolean not null default true, "title_template" varchar(255) not null default '{date} Conversation', "owner_id" int null, "created_at" timestamptz(6) not null default now());`);
    this.addSql(`alter table "account" add constraint "account_key_unique" unique ("key");`);

    this.addSql(`create table "account_user" ("id" serial primary key, "account_id" int not null, "email" varchar(320) not null, "name" varchar(255) not null, "created_at" timestamptz(6) not null default now());`);
    this.addSql(`create unique index "account_user_account_email_unique" on "account_user" ("account_id", lower("email"));`);

    this.addSql(`create table "tag" ("id" serial primary key, "account_id" int not null, "name" varchar(100) not null);`);
    this.addSql(`create unique index "tag_account_name_unique" on "tag" ("account_id", lower("name"));`);

    this.addSql(`create table "api_token" ("id" serial primary key, "account_id" int not null, "name" varchar(255) not null, "token_hash" varchar(64) not null, "hint" varchar(16) not null, "created_at" timestamptz(6) not null default now(), "last_used_at" timestamptz(6) null, "revoked_at" timestamptz(6) null);`);
    this.addSql(`alter table "api_token" add constraint "api_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "workflow" ("id" serial primary key, "account_id" int not null, "name" varchar(255) not null, "steps" jsonb not null, "created_at" timestamptz(6) not null default now());`);

    this.addSql(`create table "intake_page" ("id" serial primary key, "account_id" int not null, "name" varchar(255) not null, "is_primary" boolean not null default false, "workflow_id" int null, "created_at" timestamptz(6) not null default now());`);
    this.addSql(`create unique index "intake_page_one_primary_per_account" on "intake_page" ("account_id") where "is_primary";`);

    this.addSql(`create table "conversation" ("id" serial primary key, "account_id" int not null, "title" varchar(255) not null, "title_key" text not null, "slug" varchar(100) not null, "anyone_can_post" boolean not null, "allow_anonymous_messages" boolean not null, "allow_search_engines" boolean not null, "via_primary_intake_page" boolean not null default false, "intake_page_id" int null, "workflow" jsonb null, "created_at" timestamptz(6) not null default now());`);
    this.addSql(`create unique index "conversation_account_slug_unique" on "conversation" ("account_id", lower("slug"));`);
    this.addSql(`create index "conversation_account_recent" on "conversation" ("account_id", "created_at" desc, "id" desc);`);
    this.addSql(`create index "conversation_account_title_recent" on "conversation" ("account_id", "title_key", "created_at" desc, "id" desc);`);

    this.addSql(`create table "message" ("id" serial primary key, "account_id" int not null, "conversation_id" int not null, "message_type" varchar(32) not null default 'text', "recorded_duration_seconds" int not null default 0, "author_id" int null, "anonymous" boolean not null default false, "text" text not null default '', "download_media_url" text null, "created_at" timestamptz(6) not null default now());`);
    this.addSql(`create index "message_conversation_order" on "message" ("conversation_id", "created_at", "id");`);
    this.addSql(`alter table "message" add constraint "message_author_or_anonymous" check ("anonymous" = ("author_id" is null));`);

    this.addSql(`create table "conversation_tag" ("conversation_id" int not null, "tag_id" int not null, "account_id" int not null, primary key ("conversation_id", "tag_id"));`);

    this.addSql(`create table "conversation_member" ("conversation_id" int not null, "user_id" int not null, "account_id" int not null, primary key ("conversation_id", "user_id"));`);

    this.addSql(`alter table "account" add constraint "account_owner_id_foreign" foreign key ("owner_id") references "account_user" ("id") on delete set null;`);

    this.addSql(`alter table "account_user" add constraint "account_user_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`alter table "tag" add constraint "tag_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`alter table "api_token" add constraint "api_token_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`alter table "workflow" add constraint "workflow_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`alter table "intake_page" add constraint "intake_page_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
    this.addSql(`alter table "intake_page" add constraint "intake_page_workflow_id_foreign" foreign key ("workflow_id") references "workflow" ("id") on delete set null;`);

    this.addSql(`alter table "conversation" add constraint "conversation_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
    this.addSql(`alter table "conversation" add constraint "conversation_intake_page_id_foreign" foreign key ("intake_page_id") references "intake_page" ("id") on delete set null;`);

    this.addSql(`alter table "message" add constraint "message_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
    this.addSql(`alter table "message" add constraint "message_conversation_id_foreign" foreign key ("conversation_id") references "conversation" ("id") on delete cascade;`);
    this.addSql(`alter table "message" add constraint "message_author_id_foreign" foreign key ("author_id") references "account_user" ("id") on delete set null;`);

    this.addSql(`alter table "conversation_tag" add constraint "conversation_tag_conversation_id_foreign" foreign key ("conversation_id") references "conversation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "conversation_tag" add constraint "conversation_tag_tag_id_foreign" foreign key ("tag_id") references "tag" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "conversation_tag" add constraint "conversation_tag_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);

    this.addSql(`alter table "conversation_member" add constraint "conversation_member_conversation_id_foreign" foreign key ("conversation_id") references "conversation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "conversation_member" add constraint "conversation_member_user_id_foreign" foreign key ("user_id") references "account_user" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "conversation_member" add constraint "conversation_member_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;`);
  }

}
