import { Migration } from '@mikro-orm/migrations';

/** The foreign keys made by hand-written `references` clauses, under PostgreSQL's default names. */
const RENAMED: [table: string, column: string][] = [
  ['pass_code', 'account_id'],
  ['notify_event', 'account_id'],
  ['notification_mute', 'account_id'],
  ['notification_mute', 'user_id'],
  ['notification_digest', 'conversation_id'],
  ['notification_digest', 'user_id'],
  ['intake_page', 'welcome_message_id'],
  ['intake_page_member', 'account_id'],
  ['intake_page_member', 'intake_page_id'],
  ['intake_page_member', 'user_id'],
  ['message', 'hidden_by'],
  ['conversation_read', 'conversation_id'],
  ['conversation_read', 'user_id'],
  ['conversation_follower', 'conversation_id'],
  ['conversation_follower', 'user_id'],
  ['workflow_event', 'account_id'],
  ['workflow_event', 'conversation_id'],
  ['workflow_job', 'account_id'],
  ['workflow_job', 'conversation_id'],
];

/**
 * Every table is now a MikroORM entity, and the schema generator names a foreign key
 * `<table>_<column>_foreign`; the keys written as `references` clauses carried PostgreSQL's
 * `<table>_<column>_fkey`. Renaming them (a catalogue change, no table rewrite) makes the
 * migrated schema the entities' exactly, so a generated migration never drops and re-adds them.
 */
export class Migration20261202000000_one_schema extends Migration {
  override name = 'Migration20261202000000_one_schema';

  override async up(): Promise<void> {
    for (const [table, column] of RENAMED) {
      this.addSql(`alter table "${table}" rename constraint "${table}_${column}_fkey" to "${table}_${column}_foreign";`);
    }
  }

  override async down(): Promise<void> {
    for (const [table, column] of RENAMED) {
      this.addSql(`alter table "${table}" rename constraint "${table}_${column}_foreign" to "${table}_${column}_fkey";`);
    }
  }
}
