import { type TeamAccount, type TeamDeps, teamMemberView } from './team.ts';
import type { TeamMemberView } from './views.ts';

/** get_team: the account's team, owners first, then admins, then members, each by name. */
export async function getTeam(deps: Pick<TeamDeps, 'teamStore'>, account: TeamAccount): Promise<TeamMemberView[]> {
  const team = await deps.teamStore.team(account.id);
  return team.flatMap((p) => (p.role ? [teamMemberView({ ...p, role: p.role })] : []));
}
