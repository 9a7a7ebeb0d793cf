import { Migration } from '@mikro-orm/migrations';

/**
 * The team triages its inbox: each conversation has a state (open: waiting on us; waiting: on
 * them; closed), may be assigned to a teammate and archived, and remembers how it began (the API,
 * an intake page, the team). Conversations made before are open, unassigned, in the inbox, and
 * began through an intake page when they name one (else the API: the only other way there was).
 * The inbox's search finds words of titles as it finds words of messages: a full-text index of
 * each title, words as written (the 'simple' configuration, as message_text_search).
 */
export class Migration20261204000000_triage extends Migration {
  override name = 'Migration20261204000000_triage';

  override async up(): Promise<void> {
    this.addSql(`alter table "conversation"
      add column "state" varchar(16) not null default 'open',
      add column "source" varchar(16) not null default 'api',
      add column "assignee_id" int null,
      add constraint "conversation_assignee_id_foreign" foreign key ("assignee_id") references "account_user" ("id") on delete set null,
      add column "archived_at" timestamptz(6) null,
      add constraint "conversation_state_known" check ("state" in ('open', 'waiting', 'closed')),
      add constraint "conversation_source_known" check ("source" in ('api', 'intake', 'team'));`);
    this.addSql(
      `update "conversation" set "source" = 'intake' where "intake_page_id" is not null or "via_primary_intake_page";`,
    );
    this.addSql(
      `create index "conversation_title_search" on "conversation" using gin (to_tsvector('simple', "title"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index "conversation_title_search";');
    this.addSql(`alter table "conversation" drop column "archived_at", drop column "assignee_id",
      drop column "source", drop column "state";`);
  }
}
