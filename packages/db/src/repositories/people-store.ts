import {
  isTeamRole,
  type PendingReply,
  type PeopleStore,
  type SignedIn,
  type SignInLinkRecord,
  type UserRecord,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sha256 } from '../tokens.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { query } from './sql.ts';

/*
 * Users, sessions and sign-in links of the accounts' sites. Tokens arrive in the clear and only
 * their SHA-256 is stored or compared: a leaked table signs no one in.
 */

/**
 * The signed-in visitor of a page (the only people read on the hot path): the session's user, and
 * its expiry slid forward when it is more than a day old, in one statement.
 */
const SESSION: Prepared = {
  name: 'site_session_user',
  text: `
  with renewed as (
    update site_session set expires_at = now() + make_interval(secs => $3::float8)
    where account_id = $1 and token_hash = $2 and expires_at > now()
      and expires_at < now() + make_interval(secs => $3::float8) - interval '1 day'
    returning id
  )
  select u.id, u.name, u.email, u.team_role, exists (select 1 from renewed) as renewed
  from site_session s join account_user u on u.id = s.user_id and u.account_id = s.account_id
  where s.account_id = $1 and s.token_hash = $2 and s.expires_at > now()`,
};

interface LinkRow {
  email: string;
  name: string | null;
  return_path: string;
  pending_reply: unknown;
  claim_message_id: number | null;
}

const linkRecord = (row: LinkRow): SignInLinkRecord => ({
  email: row.email,
  name: row.name,
  returnPath: row.return_path,
  pending:
    row.pending_reply === null
      ? null
      : ((typeof row.pending_reply === 'string' ? JSON.parse(row.pending_reply) : row.pending_reply) as PendingReply),
  claim: row.claim_message_id,
});

export class PgPeopleStore implements PeopleStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async userByEmail(accountId: number, email: string): Promise<UserRecord | null> {
    const [row] = await query<UserRecord>(
      this.em,
      'select id, name, email from account_user where account_id = ? and lower(email) = lower(?)',
      [accountId, email],
    );
    return row ?? null;
  }

  async register(accountId: number, name: string, email: string): Promise<UserRecord | null> {
    // The unique index on (account_id, lower(email)) decides between two registrations at once.
    const [row] = await query<UserRecord>(
      this.em,
      'insert into account_user (account_id, email, name) values (?, ?, ?) on conflict do nothing returning id, name, email',
      [accountId, email, name],
    );
    return row ?? null;
  }

  async createSignInLink(accountId: number, token: string, link: SignInLinkRecord & { ttlSeconds: number }) {
    await query(
      this.em,
      `insert into sign_in_link (account_id, email, name, token_hash, return_path, pending_reply, expires_at)
       values (?, ?, ?, ?, ?, ?, now() + make_interval(secs => ?))`,
      [
        accountId,
        link.email,
        link.name,
        sha256(token),
        link.returnPath,
        link.pending ? JSON.stringify(link.pending) : null,
        link.ttlSeconds,
      ],
    );
  }

  async peekSignInLink(accountId: number, token: string) {
    const [row] = await query<LinkRow & { user_id: number | null; user_name: string | null; user_email: string }>(
      this.em,
      `select l.email, l.name, l.return_path, l.pending_reply, l.claim_message_id, u.id as user_id, u.name as user_name, u.email as user_email
       from sign_in_link l left join account_user u on u.account_id = l.account_id and lower(u.email) = lower(l.email)
       where l.account_id = ? and l.token_hash = ? and l.used_at is null and l.expires_at > now()`,
      [accountId, sha256(token)],
    );
    if (!row) return null;
    const user = row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? '', email: row.user_email };
    return { ...linkRecord(row), user };
  }

  async useSignInLink(accountId: number, token: string): Promise<SignInLinkRecord | null> {
    // One statement marks it used: two confirmations at once cannot both sign in.
    const [row] = await query<LinkRow>(
      this.em,
      `update sign_in_link set used_at = now()
       where account_id = ? and token_hash = ? and used_at is null and expires_at > now()
       returning email, name, return_path, pending_reply, claim_message_id`,
      [accountId, sha256(token)],
    );
    return row ? linkRecord(row) : null;
  }

  async createSession(accountId: number, userId: number, token: string, ttlSeconds: number): Promise<void> {
    await query(
      this.em,
      `insert into site_session (account_id, user_id, token_hash, expires_at)
       values (?, ?, ?, now() + make_interval(secs => ?))`,
      [accountId, userId, sha256(token), ttlSeconds],
    );
  }

  async session(accountId: number, token: string, ttlSeconds: number): Promise<SignedIn | null> {
    const [row] = await runPrepared<UserRecord & { team_role: string | null; renewed: boolean }>(this.em, SESSION, [
      accountId,
      sha256(token),
      ttlSeconds,
    ]);
    if (!row) return null;
    return {
      user: { id: row.id, name: row.name, email: row.email },
      teamRole: isTeamRole(row.team_role) ? row.team_role : null,
      renewed: row.renewed,
    };
  }

  async endSession(accountId: number, token: string): Promise<void> {
    await query(this.em, 'delete from site_session where account_id = ? and token_hash = ?', [
      accountId,
      sha256(token),
    ]);
  }

  async endAllSessions(accountId: number, userId: number): Promise<void> {
    await query(this.em, 'delete from site_session where account_id = ? and user_id = ?', [accountId, userId]);
  }
}

/** Deletes sessions and sign-in links past their expiry (now and then, like idempotency keys). */
export async function purgeExpiredPeople(em: EntityManager): Promise<void> {
  await query(em, 'delete from site_session where expires_at < now()');
  await query(em, "delete from sign_in_link where expires_at < now() - interval '1 day'");
  await query(em, "delete from visitor_rate_limit where window_start < now() - interval '1 day'");
}
