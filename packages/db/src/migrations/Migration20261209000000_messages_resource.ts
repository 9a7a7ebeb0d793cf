import { Migration } from '@mikro-orm/migrations';

/**
 * The messages resource (create_message, get_messages): a message posted through the API may be
 * kept as the safe subset of HTML (`format`), and the account's messages are paged newest first
 * across its conversations (message_account_recent).
 */
export class Migration20261209000000_messages_resource extends Migration {
  override name = 'Migration20261209000000_messages_resource';

  override async up(): Promise<void> {
    this.addSql(`alter table "message" add column "format" varchar(8) not null default 'text';`);
    this.addSql(
      `alter table "message" add constraint "message_format_known" check ("format" in ('text', 'html'));`,
    );
    this.addSql(
      'create index "message_account_recent" on "message" ("account_id", "created_at" desc, "id" desc);',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index "message_account_recent";');
    this.addSql(`alter table "message" drop column "format";`);
  }
}
