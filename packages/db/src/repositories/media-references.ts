import type { MediaReferences } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/**
 * The recordings still wanted, among `keys`: a message's or a template's (any account's: a key
 * names its own), or a reply's waiting for a mailed link that has not expired. One statement per
 * batch.
 */
export class PgMediaReferences implements MediaReferences {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async referenced(keys: readonly string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const list = `{${keys.map((k) => JSON.stringify(k)).join(',')}}`;
    const rows = await query<{ key: string }>(
      this.em,
      `select media_key as key from message where media_key = any(?::text[])
       union
       select media_key from message_template where media_key = any(?::text[])
       union
       select pending_reply->'media'->>'key' from sign_in_link
       where expires_at > now() and used_at is null and pending_reply->'media'->>'key' = any(?::text[])`,
      [list, list, list],
    );
    return new Set(rows.map((r) => r.key));
  }
}
