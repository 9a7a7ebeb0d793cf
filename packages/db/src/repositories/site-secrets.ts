import type { SiteSecrets } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/** The site's signing key: a row of site_secret (made by a migration), read once per process. */
export class PgSiteSecrets implements SiteSecrets {
  private readonly em: EntityManager;
  private key: string | null = null;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async signingKey(): Promise<string> {
    if (this.key) return this.key;
    const [row] = await query<{ value: string }>(this.em, "select value from site_secret where name = 'mail_links'");
    if (!row) throw new Error('site_secret mail_links is missing: run the migrations');
    this.key = row.value;
    return this.key;
  }
}
