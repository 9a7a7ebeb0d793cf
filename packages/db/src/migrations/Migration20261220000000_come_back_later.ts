import { Migration } from '@mikro-orm/migrations';

/**
 * A visitor's link back is made after the answer (issue 39): an intake start under an address
 * nobody confirmed no longer writes the sign-in link and its mail in its own statement; its
 * message's notify_event carries the address, and the notification round that fans the event out
 * makes the link and queues the mail. The column is empty for every other event.
 */
export class Migration20261220000000_come_back_later extends Migration {
  override name = 'Migration20261220000000_come_back_later';

  override async up(): Promise<void> {
    this.addSql('alter table "notify_event" add column "come_back_email" varchar(255) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "notify_event" drop column "come_back_email";');
  }
}
