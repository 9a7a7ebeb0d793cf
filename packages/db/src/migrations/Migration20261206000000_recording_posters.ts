import { Migration } from '@mikro-orm/migrations';

/**
 * A recording may have a poster: a still the recorder makes in the browser from its first second,
 * kept in the media store beside it (its key with `.poster`). The message says whether it has one,
 * so a page names it to its player only when there is one. Recordings made before have none.
 */
export class Migration20261206000000_recording_posters extends Migration {
  override name = 'Migration20261206000000_recording_posters';

  override async up(): Promise<void> {
    this.addSql(`alter table "message" add column "poster" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "message" drop column "poster";`);
  }
}
