import type { Actor } from '../conversations/access.ts';
import type { TeamRole } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { emailProblem, NAME_MAX_LENGTH, nameProblem } from '../shared/person.ts';
import type { TeamPerson } from './ports.ts';
import { managesTeam, ROLE_LABELS, type TeamAccount, type TeamChange, type TeamDeps } from './team.ts';
import type { UpdateTeamMemberAnswer } from './views.ts';

/** The reason a change may not be made, as a refusal the page and the API both show; null: it may. */
function refusal(actor: Actor, target: TeamPerson | null, role: TeamRole | null): DomainError | null {
  if (!managesTeam(actor)) return new DomainError('forbidden', 'only the account’s owners and admins manage its team');
  if (!target) {
    return role === null ? new DomainError('invalid_input', 'nobody with that e-mail address is on the team') : null;
  }
  if (target.accountOwner && role !== 'owner') {
    return new DomainError('invalid_input', `${target.name} owns the account and stays on its team as an owner`);
  }
  if (actor === 'account' || actor === null) return null;
  if (actor.userId === target.id && role !== target.role) {
    return new DomainError('invalid_input', 'nobody changes their own place on the team: ask another owner');
  }
  if (actor.teamRole !== 'owner' && (role === 'owner' || target.role === 'owner')) {
    return new DomainError('forbidden', 'only an owner makes someone an owner or changes an owner’s role');
  }
  return null;
}

/** A name for someone invited without one: their address's local part. */
const nameFromAddress = (email: string): string => (email.split('@')[0] ?? email).slice(0, NAME_MAX_LENGTH);

/**
 * Invites someone by address (a new user, on the team at once), changes a teammate's role, or
 * takes them off the team (they stay a participant of the conversations they are in). A person
 * who joins the team is mailed where to sign in.
 */
export async function updateTeamMember(
  deps: TeamDeps,
  account: TeamAccount,
  actor: Actor,
  change: TeamChange,
  /** Who makes the change, as the mail names them; null: the account's team. */
  by: string | null = null,
): Promise<UpdateTeamMemberAnswer> {
  const email = change.email.trim();
  const problem = emailProblem(email);
  if (problem) throw new DomainError('invalid_input', problem);
  const given = change.name?.trim() ?? '';
  if (given) {
    const bad = nameProblem(given);
    if (bad) throw new DomainError('invalid_input', bad);
  }
  const target = await deps.teamStore.person(account.id, email);
  const refused = refusal(actor, target, change.role);
  if (refused) throw refused;
  let now: TeamPerson;
  if (!target) {
    const role = change.role ?? 'member';
    const added = await deps.teamStore.add(account.id, { name: given || nameFromAddress(email), email, role });
    // The address became someone's between the read and the insert: that person's role is changed.
    if (!added) return updateTeamMember(deps, account, actor, change, by);
    now = added;
  } else {
    if (target.role !== change.role) await deps.teamStore.setRole(account.id, target.id, change.role);
    now = { ...target, role: change.role };
  }
  const changed = target?.role !== now.role;
  const mailed = changed && now.role !== null && (target === null || target.role === null);
  if (mailed && now.role) await deps.outbox.enqueue(account.id, welcomeMail(account, by, now, now.role));
  return {
    id: now.id,
    name: now.name,
    email: now.email,
    role: now.role,
    account_owner: now.accountOwner,
    changed,
    mailed,
  };
}

function welcomeMail(account: TeamAccount, by: string | null, person: TeamPerson, role: TeamRole) {
  const who = by ?? `The ${account.name} team`;
  const can =
    role === 'member'
      ? 'You see the account’s public conversations and the private ones you are in.'
      : 'You see every conversation of the account, and manage its team, intake pages and workflows.';
  return {
    to: person.email,
    subject: `You are on the ${account.name} team`,
    text: [
      `${who} put you on the ${account.name} team as ${ROLE_LABELS[role].toLowerCase()}.`,
      can,
      '',
      `Sign in with this address (${person.email}) to open the inbox:`,
      '',
      `${account.host}/sign-in`,
      '',
    ].join('\n'),
  };
}
