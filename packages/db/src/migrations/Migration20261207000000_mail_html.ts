import { Migration } from '@mikro-orm/migrations';

/**
 * A queued mail may carry its own HTML part (a notification's: who wrote, what, a recording's
 * poster where the conversation is public, a button to answer). Mail queued before has none: the
 * sender makes one of its text, as it did.
 */
export class Migration20261207000000_mail_html extends Migration {
  override name = 'Migration20261207000000_mail_html';

  override async up(): Promise<void> {
    this.addSql(`alter table "outgoing_mail" add column "html" text null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "outgoing_mail" drop column "html";`);
  }
}
