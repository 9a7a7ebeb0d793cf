import { Migration } from '@mikro-orm/migrations';

/**
 * A team member can hide a message: it leaves every answer (pages, embeds, the API, mail) but
 * stays in the table, so it can be shown again, and an export keeps it, marked hidden.
 */
export class Migration20261125300000_moderation extends Migration {
  override name = 'Migration20261125300000_moderation';

  override async up(): Promise<void> {
    this.addSql(
      `alter table "message" add column "hidden_at" timestamptz(6) null, add column "hidden_by" int null references "account_user" ("id") on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "message" drop column "hidden_by", drop column "hidden_at";`);
  }
}
