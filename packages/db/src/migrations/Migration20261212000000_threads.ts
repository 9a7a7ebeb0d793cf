import { Migration } from '@mikro-orm/migrations';

/**
 * Threads: a message may reply under another of its conversation (`parent_id`, one level: the
 * thread's first message). No reference: a thread reply outlives its parent's deletion and is
 * then a message of the conversation like any other.
 */
export class Migration20261212000000_threads extends Migration {
  override name = 'Migration20261212000000_threads';

  override async up(): Promise<void> {
    this.addSql('alter table "message" add column "parent_id" int null;');
    this.addSql('create index "message_parent" on "message" ("parent_id") where "parent_id" is not null;');
  }

  override async down(): Promise<void> {
    this.addSql('drop index "message_parent";');
    this.addSql('alter table "message" drop column "parent_id";');
  }
}
