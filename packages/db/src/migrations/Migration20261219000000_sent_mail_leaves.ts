import { Migration } from '@mikro-orm/migrations';

/**
 * A sent mail now leaves `outgoing_mail` (the worker deletes it once the SMTP server took it):
 * the ones earlier versions kept, marked sent with their body cleared, go too. Kept, they made the
 * table grow by every mail ever sent, and the vacuum a server without autovacuum runs every few
 * seconds walk all of it (half a second a round after 200,000 mails). `sent_at` stays for an
 * older replica still running during the upgrade.
 */
export class Migration20261219000000_sent_mail_leaves extends Migration {
  override name = 'Migration20261219000000_sent_mail_leaves';

  override async up(): Promise<void> {
    this.addSql('delete from "outgoing_mail" where "sent_at" is not null;');
  }

  override async down(): Promise<void> {
    // Nothing to restore: a sent mail kept no body, and nothing read what was left of it.
  }
}
