import { Migration } from '@mikro-orm/migrations';

/**
 * An intake page may say how the conversations started on it are titled (a pattern of the
 * person's name, their first words, the page's name and the date). Pages made before say nothing:
 * their conversations go on being titled "{name}: {words}".
 */
export class Migration20261205000000_intake_title_pattern extends Migration {
  override name = 'Migration20261205000000_intake_title_pattern';

  override async up(): Promise<void> {
    this.addSql(`alter table "intake_page" add column "conversation_title" varchar(200) not null default '';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "intake_page" drop column "conversation_title";`);
  }
}
