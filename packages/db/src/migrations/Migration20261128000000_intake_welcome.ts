import { Migration } from '@mikro-orm/migrations';

/**
 * An intake page may show a welcome recording above its form: the recording of one of the
 * account's messages, kept here (a message deleted takes it off the page).
 */
export class Migration20261128000000_intake_welcome extends Migration {
  override name = 'Migration20261128000000_intake_welcome';

  override async up(): Promise<void> {
    this.addSql(`alter table "intake_page"
      add column "welcome_message_id" int null references "message" ("id") on delete set null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "intake_page" drop column "welcome_message_id";`);
  }
}
