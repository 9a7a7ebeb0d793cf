import type { Authenticated } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { changeMarkSql } from './change-marks.ts';
import { type SettingsRow, settingsOf } from './conversation-reads.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { query } from './sql.ts';

/** The account's defaults come under the settings' own column names, for `settingsOf`. */
interface Row extends SettingsRow {
  token_id: number;
  rate_limit: number | null;
  id: number;
  key: string;
  name: string;
  host: string;
  title_template: string;
  owner_id: number | null;
  owner_email: string | null;
  owner_name: string | null;
  change_mark: string;
}

const BY_TOKEN: Prepared = {
  name: 'account_by_token',
  text: `
  select t.id as token_id, a.rate_limit, a.id, a.key, a.name, a.host,
    a.default_anyone_can_post as anyone_can_post, a.default_allow_anonymous_messages as allow_anonymous_messages,
    a.default_allow_search_engines as allow_search_engines, a.title_template,
    u.id as owner_id, u.email as owner_email, u.name as owner_name, ${changeMarkSql('a.id')} as change_mark
  from api_token t
  join account a on a.id = t.account_id
  left join account_user u on u.id = a.owner_id
  where t.token_hash = $1 and t.revoked_at is null`,
};

/** Resolves API tokens (by their hash) to the account they act for. */
export class PgAccountStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async findByTokenHash(tokenHash: string): Promise<Authenticated | null> {
    const [row] = await runPrepared<Row>(this.em, BY_TOKEN, [tokenHash]);
    if (!row) return null;
    return {
      tokenId: row.token_id,
      rateLimit: row.rate_limit,
      changeMark: row.change_mark,
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
    await query(this.em, 'update api_token set last_used_at = now() where id = ?', [tokenId]);
  }
}
