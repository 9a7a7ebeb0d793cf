import type { TeamRole } from '../records.ts';

/** A user of the account as the team's pages and operations see them. */
export interface TeamPerson {
  id: number;
  name: string;
  email: string;
  /** null: a participant, not on the team. */
  role: TeamRole | null;
  accountOwner: boolean;
}

/** The account's team. Every method is scoped to the account. */
export interface TeamStore {
  /** The team: owners, admins, members, each by name. */
  team(accountId: number): Promise<TeamPerson[]>;
  /** The user with that address (ignoring case), on the team or not; null when nobody. */
  person(accountId: number, email: string): Promise<TeamPerson | null>;
  /** A new user of the account, on the team; null when the address became someone's meanwhile. */
  add(accountId: number, person: { name: string; email: string; role: TeamRole }): Promise<TeamPerson | null>;
  /** Puts a user on the team with a role, or (null) takes them off it. */
  setRole(accountId: number, userId: number, role: TeamRole | null): Promise<void>;
}
