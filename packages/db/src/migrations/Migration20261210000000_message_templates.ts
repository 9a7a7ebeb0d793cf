import { Migration } from '@mikro-orm/migrations';

/**
 * The team's message templates: a library of reusable messages (text, a recording's columns of
 * their own, the creator), and on each message the template it was made from, by id and name as
 * they were (no reference: deleting a template leaves its messages as they are).
 */
export class Migration20261210000000_message_templates extends Migration {
  override name = 'Migration20261210000000_message_templates';

  override async up(): Promise<void> {
    this.addSql(`create table "message_template" (
      "id" serial primary key,
      "account_id" int not null,
      "name" varchar(255) not null,
      "text" text not null default '',
      "format" varchar(8) not null default 'text',
      "creator_id" int null,
      "message_type" varchar(32) not null default 'text',
      "recorded_duration_seconds" int not null default 0,
      "media_key" varchar(80) null,
      "media_content_type" varchar(100) null,
      "media_bytes" bigint null,
      "poster" boolean not null default false,
      "created_at" timestamptz(6) not null default now(),
      "updated_at" timestamptz(6) not null default now(),
      constraint "message_template_format_known" check ("format" in ('text', 'html')),
      constraint "message_template_media_is_recording" check ("media_key" is null or ("message_type" <> 'text' and "media_content_type" is not null and "media_bytes" is not null)));`);
    this.addSql(
      'alter table "message_template" add constraint "message_template_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "message_template" add constraint "message_template_creator_id_foreign" foreign key ("creator_id") references "account_user" ("id") on delete set null;',
    );
    this.addSql(
      'create unique index "message_template_account_name_unique" on "message_template" ("account_id", lower("name"));',
    );
    this.addSql(
      'create index "message_template_media_key" on "message_template" ("media_key") where "media_key" is not null;',
    );
    this.addSql('alter table "message" add column "template_id" int null, add column "template_name" varchar(255) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "message" drop column "template_id", drop column "template_name";');
    this.addSql('drop table "message_template";');
  }
}
