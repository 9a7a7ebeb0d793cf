import { Migration } from '@mikro-orm/migrations';

/**
 * A request to an account's own site (its conversation pages) names the account by its host: the
 * lookup reads this index. Not unique, so accounts made before hosts had to be unique still
 * migrate; the CLI refuses a host another account has from now on.
 */
export class Migration20261122200000_account_host extends Migration {
  override name = 'Migration20261122200000_account_host';

  override async up(): Promise<void> {
    this.addSql('create index "account_host_index" on "account" ("host");');
  }

  override async down(): Promise<void> {
    this.addSql('drop index "account_host_index";');
  }
}
