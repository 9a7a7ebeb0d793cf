import { Migration } from '@mikro-orm/migrations';

/**
 * A sign-in link is made for an e-mail address, not for a user found first: the forms answer and
 * take the same time whoever owns the address, and the person becomes (or is found as) a user only
 * when they confirm the link with a POST. `name` is the name a new person gave with their reply.
 * Sessions are ended all at once per user ("sign out everywhere"), so they are indexed by user.
 */
export class Migration20261124000000_link_by_address extends Migration {
  override name = 'Migration20261124000000_link_by_address';

  override async up(): Promise<void> {
    this.addSql(`alter table "sign_in_link" add column "email" varchar(320) null, add column "name" varchar(255) null;`);
    this.addSql(`update "sign_in_link" l set "email" = u."email" from "account_user" u where u."id" = l."user_id";`);
    this.addSql(`delete from "sign_in_link" where "email" is null;`);
    this.addSql(`alter table "sign_in_link" alter column "email" set not null;`);
    this.addSql(`alter table "sign_in_link" drop column "user_id";`);
    this.addSql(`create index "site_session_user" on "site_session" ("user_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "site_session_user";`);
    this.addSql(`alter table "sign_in_link" add column "user_id" int null;`);
    this.addSql(
      `update "sign_in_link" l set "user_id" = u."id" from "account_user" u where u."account_id" = l."account_id" and lower(u."email") = lower(l."email");`,
    );
    this.addSql(`delete from "sign_in_link" where "user_id" is null;`);
    this.addSql(`alter table "sign_in_link" alter column "user_id" set not null, drop column "email", drop column "name";`);
    this.addSql(
      `alter table "sign_in_link" add constraint "sign_in_link_user_id_foreign" foreign key ("user_id") references "account_user" ("id") on delete cascade;`,
    );
  }
}
