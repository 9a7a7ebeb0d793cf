import { Migration } from '@mikro-orm/migrations';

/**
 * The mail worker takes the mails that are due in the order they fell due (then by id), straight
 * off this index. Before, it took them by id: a queue grown long (a burst of intake starts with
 * their link mails) was read whole and sorted at every claim, so each claim cost more the further
 * behind the worker fell.
 */
export class Migration20261130000000_mail_due_order extends Migration {
  override name = 'Migration20261130000000_mail_due_order';

  override async up(): Promise<void> {
    this.addSql(`drop index "outgoing_mail_due";`);
    this.addSql(
      `create index "outgoing_mail_due" on "outgoing_mail" ("next_attempt_at", "id") where "sent_at" is null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "outgoing_mail_due";`);
    this.addSql(`create index "outgoing_mail_due" on "outgoing_mail" ("next_attempt_at") where "sent_at" is null;`);
  }
}
