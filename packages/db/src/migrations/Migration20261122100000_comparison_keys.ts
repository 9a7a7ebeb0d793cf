import { SLUG_KEY_SQL, titleKey } from '@convo/domain';
import { Migration } from '@mikro-orm/migrations';

/** Rows whose title key is recomputed per statement. */
const BATCH = 5_000;

/**
 * Slugs and titles compared by one rule each, whatever the database's locale: the slug index
 * moves from lower(slug), which follows the locale (a Turkish one lowers I to ı), to the
 * ASCII-only lower(slug collate "C"); every title key is recomputed by the domain's titleKey
 * (NFC and Unicode full case folding), which SQL cannot compute, so this migration does it in
 * batches and writes only the keys that change.
 */
export class Migration20261122100000_comparison_keys extends Migration {
  override name = 'Migration20261122100000_comparison_keys';

  override async up(): Promise<void> {
    await this.execute('drop index if exists "conversation_account_slug_unique"');
    await this.execute(
      `create unique index "conversation_account_slug_unique" on "conversation" ("account_id", ${SLUG_KEY_SQL('"slug"')})`,
    );
    let after = 0;
    for (;;) {
      const rows = (await this.execute('select id, title, title_key from conversation where id > ? order by id limit ?', [
        after,
        BATCH,
      ])) as { id: number; title: string; title_key: string }[];
      const last = rows.at(-1);
      if (!last) break;
      after = last.id;
      const changed = rows.filter((r) => titleKey(r.title) !== r.title_key);
      if (changed.length === 0) continue;
      await this.execute(
        `update conversation c set title_key = k.key
         from jsonb_to_recordset(?::jsonb) as k(id int, key text) where c.id = k.id`,
        [JSON.stringify(changed.map((r) => ({ id: r.id, key: titleKey(r.title) })))],
      );
    }
  }

  override async down(): Promise<void> {
    await this.execute('drop index if exists "conversation_account_slug_unique"');
    await this.execute(
      'create unique index "conversation_account_slug_unique" on "conversation" ("account_id", lower("slug"))',
    );
    await this.execute('update conversation set title_key = lower(title)');
  }
}
