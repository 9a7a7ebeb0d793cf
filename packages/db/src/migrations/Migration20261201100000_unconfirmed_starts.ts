import { Migration } from '@mikro-orm/migrations';

/**
 * A start under a name and an address is posted under that name, unconfirmed, until the link
 * mailed to the address is confirmed: the message has no author then (the API says anonymous)
 * and shows `claimed_name` marked as not confirmed; the link names the message it puts its
 * person's name on (`claim_message_id`), making them a member of its conversation.
 */
export class Migration20261201100000_unconfirmed_starts extends Migration {
  override name = 'Migration20261201100000_unconfirmed_starts';

  override async up(): Promise<void> {
    this.addSql('alter table "message" add column "claimed_name" varchar(255) null;');
    this.addSql('alter table "sign_in_link" add column "claim_message_id" int null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "sign_in_link" drop column "claim_message_id";');
    this.addSql('alter table "message" drop column "claimed_name";');
  }
}
