import { isTeamRole, type PeopleStore, type SignedIn, type SignInLinkRecord, type UserRecord } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { sha256 } from '../tokens.ts';
import { db, exec, first, run, sameAddress, slot, statement } from './query.ts';

/*
 * Users, sessions and sign-in links of the accounts' sites. Tokens arrive in the clear and only
 * their SHA-256 is stored or compared: a leaked table signs no one in.
 */

/** `seconds` from now, as PostgreSQL's clock has it. */
const fromNow = (seconds: unknown) => sql<Date>`now() + make_interval(secs => ${seconds}::float8)`;

/**
 * The signed-in visitor of a page (the only people read on the hot path): the session's user, and
 * its expiry slid forward when it is more than a day old, in one statement.
 */
const SESSION = statement(
  'site_session_user',
  db
    .with('renewed', (q) =>
      q
        .updateTable('site_session')
        .set({ expires_at: fromNow(slot('ttl')) })
        .where('account_id', '=', slot<number>('account'))
        .where('token_hash', '=', slot<string>('hash'))
        .where('expires_at', '>', sql<Date>`now()`)
        .where('expires_at', '<', sql<Date>`${fromNow(slot('ttl'))} - interval '1 day'`)
        .returning('id'),
    )
    .selectFrom('site_session as s')
    .innerJoin('account_user as u', (j) => j.onRef('u.id', '=', 's.user_id').onRef('u.account_id', '=', 's.account_id'))
    .select((eb) => [
      'u.id',
      'u.name',
      'u.email',
      'u.team_role',
      eb.exists(eb.selectFrom('renewed').select('renewed.id')).$castTo<boolean>().as('renewed'),
    ])
    .where('s.account_id', '=', slot<number>('account'))
    .where('s.token_hash', '=', slot<string>('hash'))
    .where('s.expires_at', '>', sql<Date>`now()`),
);

/** What a sign-in link carries, as `linkRecord` maps it. */
const LINK_COLUMNS = ['email', 'name', 'return_path', 'pending_reply', 'claim_message_id'] as const;

const linkRecord = (row: {
  email: string;
  name: string | null;
  return_path: string;
  pending_reply: SignInLinkRecord['pending'];
  claim_message_id: number | null;
}): SignInLinkRecord => ({
  email: row.email,
  name: row.name,
  returnPath: row.return_path,
  pending: row.pending_reply,
  claim: row.claim_message_id,
});

/** A link that may still be used: not used and not expired. */
const usableLink = (account: number, token: string) =>
  db
    .selectFrom('sign_in_link as l')
    .where('l.account_id', '=', account)
    .where('l.token_hash', '=', sha256(token))
    .where('l.used_at', 'is', null)
    .where('l.expires_at', '>', sql<Date>`now()`);

export class PgPeopleStore implements PeopleStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async userByEmail(accountId: number, email: string): Promise<UserRecord | null> {
    const row = await first(
      this.em,
      db
        .selectFrom('account_user')
        .select(['id', 'name', 'email'])
        .where('account_id', '=', accountId)
        .where(sameAddress('email', email)),
    );
    return row ?? null;
  }

  async register(accountId: number, name: string, email: string): Promise<UserRecord | null> {
    // The unique index on (account_id, lower(email)) decides between two registrations at once.
    const row = await first(
      this.em,
      db
        .insertInto('account_user')
        .values({ account_id: accountId, email, name })
        .onConflict((c) => c.doNothing())
        .returning(['id', 'name', 'email']),
    );
    return row ?? null;
  }

  async createSignInLink(accountId: number, token: string, link: SignInLinkRecord & { ttlSeconds: number }) {
    await exec(
      this.em,
      db.insertInto('sign_in_link').values({
        account_id: accountId,
        email: link.email,
        name: link.name,
        token_hash: sha256(token),
        return_path: link.returnPath,
        pending_reply: link.pending ? sql`${JSON.stringify(link.pending)}::jsonb` : null,
        claim_message_id: link.claim ?? null,
        expires_at: fromNow(link.ttlSeconds),
      }),
    );
  }

  async peekSignInLink(accountId: number, token: string) {
    const row = await first(
      this.em,
      usableLink(accountId, token)
        .leftJoin('account_user as u', (j) =>
          j.onRef('u.account_id', '=', 'l.account_id').on(sameAddress('u.email', sql.ref('l.email'))),
        )
        .select(LINK_COLUMNS.map((c) => `l.${c}` as const))
        .select(['u.id as user_id', 'u.name as user_name', 'u.email as user_email']),
    );
    if (!row) return null;
    const user =
      row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? '', email: row.user_email ?? '' };
    return { ...linkRecord(row), user };
  }

  async useSignInLink(accountId: number, token: string): Promise<SignInLinkRecord | null> {
    // One statement marks it used: two confirmations at once cannot both sign in.
    const row = await first(
      this.em,
      db
        .updateTable('sign_in_link')
        .set({ used_at: sql<Date>`now()` })
        .where('account_id', '=', accountId)
        .where('token_hash', '=', sha256(token))
        .where('used_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .returning(LINK_COLUMNS),
    );
    return row ? linkRecord(row) : null;
  }

  async createSession(accountId: number, userId: number, token: string, ttlSeconds: number): Promise<void> {
    await exec(
      this.em,
      db.insertInto('site_session').values({
        account_id: accountId,
        user_id: userId,
        token_hash: sha256(token),
        expires_at: fromNow(ttlSeconds),
      }),
    );
  }

  async session(accountId: number, token: string, ttlSeconds: number): Promise<SignedIn | null> {
    const [row] = await run(this.em, SESSION, { account: accountId, hash: sha256(token), ttl: ttlSeconds });
    if (!row) return null;
    return {
      user: { id: row.id, name: row.name, email: row.email },
      teamRole: isTeamRole(row.team_role) ? row.team_role : null,
      renewed: row.renewed,
    };
  }

  async endSession(accountId: number, token: string): Promise<void> {
    await exec(
      this.em,
      db.deleteFrom('site_session').where('account_id', '=', accountId).where('token_hash', '=', sha256(token)),
    );
  }

  async endAllSessions(accountId: number, userId: number): Promise<void> {
    await exec(
      this.em,
      db.deleteFrom('site_session').where('account_id', '=', accountId).where('user_id', '=', userId),
    );
  }
}

/** Deletes sessions and sign-in links past their expiry (now and then, like idempotency keys). */
export async function purgeExpiredPeople(em: EntityManager): Promise<void> {
  const now = sql<Date>`now()`;
  const dayAgo = sql<Date>`now() - interval '1 day'`;
  await exec(em, db.deleteFrom('site_session').where('expires_at', '<', now));
  await exec(em, db.deleteFrom('sign_in_link').where('expires_at', '<', dayAgo));
  await exec(em, db.deleteFrom('visitor_rate_limit').where('window_start', '<', dayAgo));
}
