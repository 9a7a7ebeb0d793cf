import { Migration } from '@mikro-orm/migrations';

/**
 * Reply by e-mail (issue 44): the addresses notification mails may be answered at (a token's
 * hash, for one person and conversation or thread, with a lifetime and a use count), and the
 * mails taken in, by address and Message-ID, so one mail is acted on once.
 */
export class Migration20261218000000_reply_addresses extends Migration {
  override name = 'Migration20261218000000_reply_addresses';

  override async up(): Promise<void> {
    this.addSql(`create table "reply_address" (
      "id" serial primary key,
      "account_id" int not null,
      "user_id" int not null,
      "conversation_id" int null,
      "parent_id" int null,
      "token_hash" varchar(64) not null,
      "message_id" varchar(255) not null,
      "created_at" timestamptz(6) not null default now(),
      "expires_at" timestamptz(6) not null,
      "uses" int not null default 0,
      "bounced_at" timestamptz(6) null);`);
    this.addSql('alter table "reply_address" add constraint "reply_address_token_hash_unique" unique ("token_hash");');
    this.addSql('alter table "reply_address" add constraint "reply_address_message_id_unique" unique ("message_id");');
    for (const [column, table, deleted] of [
      ['account_id', 'account', 'cascade'],
      ['user_id', 'account_user', 'cascade'],
      // A deleted conversation leaves its addresses, so a reply to one is told it is gone.
      ['conversation_id', 'conversation', 'set null'],
    ]) {
      this.addSql(
        `alter table "reply_address" add constraint "reply_address_${column}_foreign" foreign key ("${column}") references "${table}" ("id") on update no action on delete ${deleted};`,
      );
    }
    this.addSql('create index "reply_address_user" on "reply_address" ("user_id");');
    this.addSql('create index "reply_address_conversation" on "reply_address" ("conversation_id");');
    this.addSql('create index "reply_address_expires" on "reply_address" ("expires_at");');
    this.addSql(`create table "inbound_mail" (
      "reply_address_id" int not null,
      "message_key" varchar(64) not null,
      "account_id" int not null,
      "outcome" varchar(16) not null,
      "created_at" timestamptz(6) not null default now(),
      primary key ("reply_address_id", "message_key"));`);
    this.addSql(
      'alter table "inbound_mail" add constraint "inbound_mail_reply_address_id_foreign" foreign key ("reply_address_id") references "reply_address" ("id") on update no action on delete cascade;',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "inbound_mail";');
    this.addSql('drop table if exists "reply_address";');
  }
}
