import { Migration } from '@mikro-orm/migrations';
import { withInternal } from './Migration20261211000000_internal_notes.ts';

/** A reaction added or taken back: told to every stream that shows the message (a note's: the team's). */
const reacted = (rows: string) => `select n.account_id, n.conversation_id, 'reacted', n.message_id, m.author_id, m.internal
          from ${rows} n join message m on m.id = n.message_id order by n.id`;

/**
 * Reactions: one row per message, reaction (one of a fixed set) and person (`reactor_key`: a user,
 * or an anonymous visitor's session by its hash). Adding or taking one back writes the live feed's
 * `reacted` event; a notify_event may be a reaction (`reaction_id`), and a pending mail may hold
 * reactions alone (`first_reaction_id`).
 */
export class Migration20261216000000_reactions extends Migration {
  override name = 'Migration20261216000000_reactions';

  override async up(): Promise<void> {
    this.addSql(`create table "message_reaction" (
      "id" bigserial primary key,
      "account_id" int not null,
      "conversation_id" int not null,
      "message_id" int not null,
      "reaction" varchar(16) not null,
      "user_id" int null,
      "reactor_key" varchar(64) not null,
      "created_at" timestamptz(6) not null default now());`);
    this.addSql(
      'alter table "message_reaction" add constraint "message_reaction_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "message_reaction" add constraint "message_reaction_message_id_foreign" foreign key ("message_id") references "message" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "message_reaction" add constraint "message_reaction_user_id_foreign" foreign key ("user_id") references "account_user" ("id") on delete cascade;',
    );
    this.addSql(
      'create unique index "message_reaction_once" on "message_reaction" ("message_id", "reaction", "reactor_key");',
    );
    this.addSql(withInternal('live_message_reacted', reacted('new_rows')));
    this.addSql(withInternal('live_message_unreacted', reacted('old_rows')));
    this.addSql(
      'create trigger "message_reaction_live" after insert on "message_reaction" referencing new table as new_rows for each statement execute function "live_message_reacted"();',
    );
    this.addSql(
      'create trigger "message_reaction_live_gone" after delete on "message_reaction" referencing old table as old_rows for each statement execute function "live_message_unreacted"();',
    );
    this.addSql('alter table "notify_event" add column "reaction_id" bigint null;');
    this.addSql('alter table "notification_digest" add column "first_reaction_id" bigint null;');
  }

  override async down(): Promise<void> {
    this.addSql('delete from "notification_digest" where "first_message_id" is null and "first_play_id" is null;');
    this.addSql('alter table "notification_digest" drop column "first_reaction_id";');
    this.addSql('delete from "notify_event" where "reaction_id" is not null;');
    this.addSql('alter table "notify_event" drop column "reaction_id";');
    this.addSql('drop table "message_reaction";');
    this.addSql('drop function "live_message_reacted"();');
    this.addSql('drop function "live_message_unreacted"();');
  }
}
