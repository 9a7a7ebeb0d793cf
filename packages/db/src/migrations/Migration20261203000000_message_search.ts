import { Migration } from '@mikro-orm/migrations';

/**
 * The team's inbox searches what was said in its conversations, not only their titles: a full-text
 * index of each message's text, words as written (the 'simple' configuration: no language's
 * stemming, so a search finds the words typed in any language).
 */
export class Migration20261203000000_message_search extends Migration {
  override name = 'Migration20261203000000_message_search';

  override async up(): Promise<void> {
    this.addSql(`create index "message_text_search" on "message" using gin (to_tsvector('simple', "text"));`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index "message_text_search";');
  }
}
