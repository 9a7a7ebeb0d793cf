import { Migration } from '@mikro-orm/migrations';

/**
 * The inbox's search, one index: each conversation keeps the words its visible messages say
 * (`said`, a tsvector without positions, kept by the statements that write messages), and one GIN
 * index covers them with the title's words. At 1,000,000 conversations, searching two indexes
 * (titles, and every message's text) and then ordering the conversations they named ran past the
 * statement timeout for words many messages say; and a message's insert no longer feeds an index
 * of its own. The words are said as repositories/said.ts says them again (its first 150,000
 * characters).
 */
export class Migration20261208000000_conversation_search extends Migration {
  override name = 'Migration20261208000000_conversation_search';

  override async up(): Promise<void> {
    this.addSql(`alter table "conversation" add column "said" tsvector not null default ''::tsvector;`);
    this.addSql(`update "conversation" c set "said" = s.said
      from (select m.conversation_id, strip(to_tsvector('simple',
          left(string_agg(m.text, ' ' order by m.created_at, m.id), 150000))) as said
        from "message" m where m.hidden_at is null group by m.conversation_id) s
      where s.conversation_id = c.id;`);
    this.addSql(
      `create index "conversation_search" on "conversation" using gin ((to_tsvector('simple', "title") || "said"));`,
    );
    this.addSql('drop index "conversation_title_search";');
    this.addSql('drop index "message_text_search";');
  }

  override async down(): Promise<void> {
    this.addSql(`create index "message_text_search" on "message" using gin (to_tsvector('simple', "text"));`);
    this.addSql(`create index "conversation_title_search" on "conversation" using gin (to_tsvector('simple', "title"));`);
    this.addSql('drop index "conversation_search";');
    this.addSql(`alter table "conversation" drop column "said";`);
  }
}
