import { type Actor, managesIntake } from '../conversations/access.ts';
import type { AccountContext, TeamRole } from '../records.ts';
import type { MailOutbox } from '../shared/mail.ts';
import type { TeamPerson, TeamStore } from './ports.ts';
import type { TeamMemberView } from './views.ts';

/*
 * Who is on an account's team and with which role. The README's role table is the rule: owners
 * and admins manage the team; only an owner makes an owner or changes one; the account's owner
 * stays an owner; nobody changes their own place (a slip would lock them out). The API's token
 * acts for the account, as its owner does, and the CLI with it.
 */

/** What the team's rules know of its account: the API's context and the site's account both are one. */
export type TeamAccount = Pick<AccountContext, 'id' | 'name' | 'host'>;

export interface TeamDeps {
  teamStore: TeamStore;
  outbox: MailOutbox;
}

/** A change to the team: an address, a name for someone new, the role (null: off the team). */
export interface TeamChange {
  email: string;
  name?: string | undefined;
  role: TeamRole | null;
}

export const ROLE_LABELS: Record<TeamRole, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' };

/** Whether the actor may manage the team at all (the pages show its forms only to them): as the intake. */
export const managesTeam = (actor: Actor): boolean => actor === 'account' || managesIntake(actor);

/** A teammate as get_team shows them. */
export const teamMemberView = (p: TeamPerson & { role: TeamRole }): TeamMemberView => ({
  id: p.id,
  name: p.name,
  email: p.email,
  role: p.role,
  account_owner: p.accountOwner,
});
