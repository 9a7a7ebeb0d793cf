import { Migration } from '@mikro-orm/migrations';

/**
 * Comments at a moment: a thread reply under a recording may say where in it (`at_seconds`,
 * whole seconds from its start), and the page marks that moment on the recording's timeline.
 */
export class Migration20261215100000_moments extends Migration {
  override name = 'Migration20261215100000_moments';

  override async up(): Promise<void> {
    this.addSql('alter table "message" add column "at_seconds" int null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "message" drop column "at_seconds";');
  }
}
