import { z } from 'zod';
import { TEAM_ROLES } from '../records.ts';

/** One person on the account's team, as get_team and update_team_member show them. */
export const ZTeamMember = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    role: z.enum(TEAM_ROLES).meta({
      description: 'owner and admin see every conversation and manage the team; member sees the ones they are in',
    }),
    account_owner: z.boolean().meta({ description: 'The person who owns the account: an owner whatever happens.' }),
  })
  .meta({ id: 'TeamMember' });

export type TeamMemberView = z.infer<typeof ZTeamMember>;

/** What get_team answers: the team, owners first, then admins, then members, each by name. */
export const ZGetTeamAnswer = z.object({ team: z.array(ZTeamMember) }).meta({ id: 'Team' });

export type GetTeamAnswer = z.infer<typeof ZGetTeamAnswer>;

/** What update_team_member answers: the person as they are now (`role` null: off the team). */
export const ZUpdateTeamMemberAnswer = z
  .object({
    id: z.number().int(),
    name: z.string(),
    email: z.string(),
    role: z.enum(TEAM_ROLES).nullable().meta({ description: 'null: not on the team (any more)' }),
    account_owner: z.boolean(),
    changed: z.boolean().meta({ description: 'Whether this call changed anything.' }),
    mailed: z.boolean().meta({ description: 'Whether the person was sent a mail saying they are on the team now.' }),
  })
  .meta({ id: 'TeamMemberChange' });

export type UpdateTeamMemberAnswer = z.infer<typeof ZUpdateTeamMemberAnswer>;
