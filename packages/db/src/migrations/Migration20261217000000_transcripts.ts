import { Migration } from '@mikro-orm/migrations';
import { withInternal } from './Migration20261211000000_internal_notes.ts';

/**
 * A transcript made, or its words corrected: told to every stream that shows a message carrying
 * the recording (a note's: the team's), so an open page adds the captions and the words.
 */
const transcribed = `select m.account_id, m.conversation_id, 'transcribed', m.id, null::int, m.internal
          from new_rows n join old_rows o on o.media_key = n.media_key
          join message m on m.media_key = n.media_key and m.account_id = n.account_id
          where n.status = 'complete' and (o.status <> 'complete' or o.segments is distinct from n.segments)
            and m.hidden_at is null
          order by m.id`;

/**
 * Transcripts (issue 43): a row per recording kept, due from the moment a message brings it (a
 * row trigger on message, only for a message with a recording), so every way a recording comes
 * (a page's reply, an upload, the API, an intake start, a template, an import) queues it once.
 * Recordings kept before are queued too: they are transcribed once an engine is configured. A
 * transcript made or corrected writes the live feed's `transcribed` event.
 */
export class Migration20261217000000_transcripts extends Migration {
  override name = 'Migration20261217000000_transcripts';

  override async up(): Promise<void> {
    this.addSql(`create table "transcript" (
      "media_key" varchar(80) not null,
      "account_id" int not null,
      "status" varchar(16) not null default 'pending',
      "language" varchar(16) null,
      "segments" jsonb null,
      "text" text null,
      "reason" text null,
      "attempts" int not null default 0,
      "due_at" timestamptz(6) not null default now(),
      "corrected_by_id" int null,
      "created_at" timestamptz(6) not null default now(),
      "updated_at" timestamptz(6) not null default now(),
      constraint "transcript_pkey" primary key ("media_key"),
      constraint "transcript_status_known" check ("status" in ('pending', 'complete', 'no_audio', 'failed')));`);
    this.addSql(
      'alter table "transcript" add constraint "transcript_account_id_foreign" foreign key ("account_id") references "account" ("id") on delete cascade;',
    );
    this.addSql(
      'alter table "transcript" add constraint "transcript_corrected_by_id_foreign" foreign key ("corrected_by_id") references "account_user" ("id") on delete set null;',
    );
    this.addSql(`create index "transcript_due" on "transcript" ("due_at") where "status" = 'pending';`);
    this.addSql(`create function "transcript_due"() returns trigger language plpgsql as $$
      begin
        insert into transcript (media_key, account_id) values (new.media_key, new.account_id) on conflict do nothing;
        return null;
      end $$;`);
    this.addSql(
      'create trigger "message_transcript_due" after insert on "message" for each row when (new.media_key is not null) execute function "transcript_due"();',
    );
    this.addSql(withInternal('live_transcribed', transcribed));
    this.addSql(
      'create trigger "transcript_live" after update on "transcript" referencing old table as old_rows new table as new_rows for each statement execute function "live_transcribed"();',
    );
    this.addSql(`insert into "transcript" ("media_key", "account_id")
      select distinct "media_key", "account_id" from "message" where "media_key" is not null on conflict do nothing;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger "message_transcript_due" on "message";');
    this.addSql('drop function "transcript_due"();');
    this.addSql('drop table "transcript";');
    this.addSql('drop function "live_transcribed"();');
  }
}
