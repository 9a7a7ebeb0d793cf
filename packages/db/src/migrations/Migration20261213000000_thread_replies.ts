import { Migration } from '@mikro-orm/migrations';

/**
 * A conversation's page lists its own messages and shows thread replies under their first message,
 * so a reply whose first message was deleted becomes a message of the conversation again (its
 * `parent_id` cleared, as deleting one now does), and the page finds the replies it does not show
 * (their anchors) by an index of replies alone.
 */
export class Migration20261213000000_thread_replies extends Migration {
  override name = 'Migration20261213000000_thread_replies';

  override async up(): Promise<void> {
    this.addSql(`update "message" as "m" set "parent_id" = null where "m"."parent_id" is not null
      and not exists (select 1 from "message" as "p" where "p"."id" = "m"."parent_id");`);
    this.addSql(
      'create index "message_conversation_replies" on "message" ("conversation_id", "id") where "parent_id" is not null;',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index "message_conversation_replies";');
  }
}
