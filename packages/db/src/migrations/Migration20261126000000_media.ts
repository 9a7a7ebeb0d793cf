import { Migration } from '@mikro-orm/migrations';

/**
 * Recorded messages. `message_type` is one of text, video, screen, audio (a type a seed brought
 * in before becomes `video` when the message had a recording, else `text`); a recording this
 * server keeps has its store key, probed type and size beside it, and its `download_media_url`
 * is made from the account's host when answered (the column stays for recordings kept
 * elsewhere).
 */
export class Migration20261126000000_media extends Migration {
  override name = 'Migration20261126000000_media';

  override async up(): Promise<void> {
    this.addSql(
      `update "message" set "message_type" = case when "download_media_url" is not null or "recorded_duration_seconds" > 0 then 'video' else 'text' end where "message_type" not in ('text', 'video', 'screen', 'audio');`,
    );
    this.addSql(
      `alter table "message" add column "media_key" varchar(80) null, add column "media_content_type" varchar(100) null, add column "media_bytes" bigint null;`,
    );
    // The hourly sweep asks which keys a message still holds.
    this.addSql(`create index "message_media_key" on "message" ("media_key") where "media_key" is not null;`);
    this.addSql(
      `alter table "message" add constraint "message_type_known" check ("message_type" in ('text', 'video', 'screen', 'audio'));`,
    );
    this.addSql(
      `alter table "message" add constraint "message_media_is_recording" check ("media_key" is null or ("message_type" <> 'text' and "media_content_type" is not null and "media_bytes" is not null));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "message" drop constraint "message_media_is_recording";`);
    this.addSql(`alter table "message" drop constraint "message_type_known";`);
    this.addSql(`drop index "message_media_key";`);
    this.addSql(
      `alter table "message" drop column "media_bytes", drop column "media_content_type", drop column "media_key";`,
    );
  }
}
