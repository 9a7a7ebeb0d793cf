import { Migration } from '@mikro-orm/migrations';
import { withInternal } from './Migration20261211000000_internal_notes.ts';

/** A play's live event: told to the message's author (`user_id`) and the team, marked when it is a note's. */
const PLAYED = `select n.account_id, n.conversation_id, 'played', n.message_id, m.author_id, m.internal
          from new_rows n join message m on m.id = n.message_id order by n.id`;

/**
 * Played receipts: one row per message and viewing session that played its recording past the
 * threshold, written by the site's beacon; its insert writes the live feed's `played` event, so
 * the author's open page shows the receipt as it comes.
 */
export class Migration20261214000000_message_plays extends Migration {
  override name = 'Migration20261214000000_message_plays';

  override async up(): Promise<void> {
    this.addSql(`create table "message_play" (
      "id" bigserial primary key,
      "account_id" int not null,
      "conversation_id" int not null,
      "message_id" int not null,
      "viewer_id" int null,
      "session_key" varchar(64) not null,
      "played_at" timestamptz(6) not null default now());`);
    this.addSql(
      'alter table "message_play" add constraint "message_play_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "message_play" add constraint "message_play_message_id_foreign" foreign key ("message_id") references "message" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "message_play" add constraint "message_play_viewer_id_foreign" foreign key ("viewer_id") references "account_user" ("id") on delete set null;',
    );
    this.addSql(
      'create unique index "message_play_session" on "message_play" ("message_id", "session_key");',
    );
    this.addSql(withInternal('live_message_played', PLAYED));
    this.addSql(
      'create trigger "message_play_live" after insert on "message_play" referencing new table as new_rows for each statement execute function "live_message_played"();',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table "message_play";');
    this.addSql('drop function "live_message_played"();');
  }
}
