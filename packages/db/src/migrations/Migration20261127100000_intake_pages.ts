import { Migration } from '@mikro-orm/migrations';

/**
 * Intake pages the team manages: each has a key (its address, `/p/<key>`, unique per account
 * ignoring case; a page made before gets `page-<id>`), a title and welcome text for the visitors,
 * whether anonymous starts are allowed, the team members who join every conversation started
 * there, and may be disabled (then it is unusable, as a missing page is).
 */
export class Migration20261127100000_intake_pages extends Migration {
  override name = 'Migration20261127100000_intake_pages';

  override async up(): Promise<void> {
    this.addSql(`alter table "intake_page"
      add column "key" varchar(60) null,
      add column "title" varchar(255) not null default '',
      add column "welcome_text" text not null default '',
      add column "allow_anonymous" boolean not null default false,
      add column "disabled_at" timestamptz(6) null,
      add column "updated_at" timestamptz(6) not null default now();`);
    this.addSql(`update "intake_page" set "key" = 'page-' || "id", "title" = "name";`);
    this.addSql(`alter table "intake_page" alter column "key" set not null;`);
    this.addSql(
      `create unique index "intake_page_account_key_unique" on "intake_page" ("account_id", lower("key"));`,
    );
    this.addSql(`create table "intake_page_member" (
      "intake_page_id" int not null references "intake_page" ("id") on delete cascade,
      "user_id" int not null references "account_user" ("id") on delete cascade,
      "account_id" int not null references "account" ("id") on delete cascade,
      primary key ("intake_page_id", "user_id"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "intake_page_member";`);
    this.addSql(`drop index "intake_page_account_key_unique";`);
    this.addSql(`alter table "intake_page" drop column "key", drop column "title", drop column "welcome_text",
      drop column "allow_anonymous", drop column "disabled_at", drop column "updated_at";`);
  }
}
