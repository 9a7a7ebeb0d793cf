import type { TeamPerson, TeamRole, TeamStore } from '@convo/domain';
import { isTeamRole } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { db, exec, first, sameAddress } from './query.ts';

/** A user row as the team sees it: the role, and whether they own the account. */
const person = (accountId: number) =>
  db
    .selectFrom('account_user as u')
    .innerJoin('account as a', 'a.id', 'u.account_id')
    .select([
      'u.id',
      'u.name',
      'u.email',
      'u.team_role as role',
      sql<boolean>`coalesce(a.owner_id = u.id, false)`.as('accountOwner'),
    ])
    .where('u.account_id', '=', accountId);

const toPerson = (row: { id: number; name: string; email: string; role: string | null; accountOwner: boolean }) => ({
  ...row,
  role: isTeamRole(row.role) ? row.role : null,
});

/** The account's team, read and changed in the account's rows only. */
export class PgTeamStore implements TeamStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async team(accountId: number): Promise<TeamPerson[]> {
    const rows = await exec(
      this.em,
      person(accountId)
        .where('u.team_role', 'is not', null)
        .orderBy(sql`array_position(array['owner', 'admin', 'member']::text[], u.team_role::text)`)
        .orderBy(sql`lower(u.name)`)
        .orderBy('u.id'),
    );
    return rows.map(toPerson);
  }

  async person(accountId: number, email: string): Promise<TeamPerson | null> {
    const row = await first(this.em, person(accountId).where(sameAddress('u.email', email)));
    return row ? toPerson(row) : null;
  }

  async add(accountId: number, p: { name: string; email: string; role: TeamRole }): Promise<TeamPerson | null> {
    // The unique index on (account_id, lower(email)) decides between two invitations at once.
    const row = await first(
      this.em,
      db
        .insertInto('account_user')
        .values({ account_id: accountId, email: p.email, name: p.name, team_role: p.role })
        .onConflict((c) => c.doNothing())
        .returning(['id', 'name', 'email']),
    );
    return row ? { ...row, role: p.role, accountOwner: false } : null;
  }

  async setRole(accountId: number, userId: number, role: TeamRole | null): Promise<void> {
    await exec(
      this.em,
      db
        .updateTable('account_user')
        .set({ team_role: role })
        .where('account_id', '=', accountId)
        .where('id', '=', userId),
    );
  }
}
