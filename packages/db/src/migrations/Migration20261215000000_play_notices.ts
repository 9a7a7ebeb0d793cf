import { Migration } from '@mikro-orm/migrations';

/**
 * Played receipts by mail, in the digest people already get: a notify_event may be a play
 * (`play_id`), a pending mail may hold plays and no message (`first_play_id`, `first_message_id`
 * null), and a mute may stop play notices alone (`kind` 'plays') rather than all mail ('all').
 */
export class Migration20261215000000_play_notices extends Migration {
  override name = 'Migration20261215000000_play_notices';

  override async up(): Promise<void> {
    this.addSql('alter table "notify_event" add column "play_id" bigint null;');
    this.addSql('alter table "notification_digest" alter column "first_message_id" drop not null;');
    this.addSql('alter table "notification_digest" add column "first_play_id" bigint null;');
    this.addSql(`alter table "notification_mute" add column "kind" varchar(8) not null default 'all';`);
    this.addSql('alter table "notification_mute" drop constraint "notification_mute_pkey";');
    this.addSql(
      'alter table "notification_mute" add constraint "notification_mute_pkey" primary key ("account_id", "user_id", "conversation_id", "kind");',
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "notification_mute" where "kind" <> 'all';`);
    this.addSql('alter table "notification_mute" drop constraint "notification_mute_pkey";');
    this.addSql('alter table "notification_mute" drop column "kind";');
    this.addSql(
      'alter table "notification_mute" add constraint "notification_mute_pkey" primary key ("account_id", "user_id", "conversation_id");',
    );
    this.addSql('delete from "notification_digest" where "first_message_id" is null;');
    this.addSql('alter table "notification_digest" drop column "first_play_id";');
    this.addSql('alter table "notification_digest" alter column "first_message_id" set not null;');
    this.addSql('delete from "notify_event" where "play_id" is not null;');
    this.addSql('alter table "notify_event" drop column "play_id";');
  }
}
