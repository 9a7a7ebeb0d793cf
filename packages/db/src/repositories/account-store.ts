import type { Authenticated } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { changeMarkOf } from './change-marks.ts';
import { settingsOf } from './conversation-reads.ts';
import { db, exec, run, slot, statement } from './query.ts';

/**
 * What a create needs of its account `a` and owner `u` (joined under those names): the defaults,
 * under the settings' own column names for `settingsOf`, the title template and the owner.
 */
export const ACCOUNT_DEFAULTS = [
  'a.default_anyone_can_post as anyone_can_post',
  'a.default_allow_anonymous_messages as allow_anonymous_messages',
  'a.default_allow_search_engines as allow_search_engines',
  'a.title_template',
  'u.id as owner_id',
  'u.email as owner_email',
  'u.name as owner_name',
] as const;

/**
 * Every API request's first read: the token's account with its defaults (under the settings' own
 * column names, for `settingsOf`), its owner and its change mark.
 */
const BY_TOKEN = statement(
  'account_by_token',
  db
    .selectFrom('api_token as t')
    .innerJoin('account as a', 'a.id', 't.account_id')
    .leftJoin('account_user as u', 'u.id', 'a.owner_id')
    .select(['t.id as token_id', 'a.rate_limit', 'a.id', 'a.key', 'a.name', 'a.host', ...ACCOUNT_DEFAULTS])
    .select((eb) => changeMarkOf(eb.ref('a.id')).as('change_mark'))
    .where('t.token_hash', '=', slot<string>('hash'))
    .where('t.revoked_at', 'is', null),
);

/** Resolves API tokens (by their hash) to the account they act for. */
export class PgAccountStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async findByTokenHash(tokenHash: string): Promise<Authenticated | null> {
    const [row] = await run(this.em, BY_TOKEN, { hash: tokenHash });
    if (!row) return null;
    return {
      tokenId: row.token_id,
      rateLimit: row.rate_limit,
      changeMark: row.change_mark ?? '0',
      account: {
        id: row.id,
        key: row.key,
        name: row.name,
        host: row.host,
        defaults: settingsOf(row),
        titleTemplate: row.title_template,
        owner:
          row.owner_id === null ? null : { id: row.owner_id, email: row.owner_email ?? '', name: row.owner_name ?? '' },
      },
    };
  }

  async touchToken(tokenId: number): Promise<void> {
    await exec(this.em, db.updateTable('api_token').set({ last_used_at: sql<Date>`now()` }).where('id', '=', tokenId));
  }
}
