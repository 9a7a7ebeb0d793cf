import { NAME_MAX_LENGTH, TEAM_ROLES, ZUpdateTeamMemberAnswer } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS, type OperationSpec } from '../../operation.ts';

export const ZUpdateTeamMemberInput = z.object({
  email: z.string().max(320).meta({ description: 'The person’s e-mail address (compared without case).' }),
  name: z
    .string()
    .max(NAME_MAX_LENGTH)
    .optional()
    .meta({ description: 'Their name, for someone new to the account; else their address’s local part.' }),
  role: z.enum([...TEAM_ROLES, 'none']).meta({ description: 'The role on the team; `none` takes them off it.' }),
});

export const updateTeamMemberSpec = {
  input: ZUpdateTeamMemberInput,
  output: ZUpdateTeamMemberAnswer,
  meta: {
    openapi: {
      method: 'POST',
      path: '/team/update_team_member',
      summary: 'Invite a teammate, change a role, or take someone off the team',
      tags: ['team'],
      protect: true,
      contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
    },
  },
  doc: {
    description:
      'Not in the original service. An address that is nobody’s yet becomes a new user of the account, on the ' +
      'team with `role`; a participant’s joins the team; a teammate’s role changes; `none` takes them off the ' +
      'team (they stay in the conversations they are in, as a participant). Someone who joins the team is ' +
      'mailed where to sign in (`mailed`). The account’s owner stays an owner. The same rules hold on the ' +
      'team’s page, where only owners and admins may do this and only an owner makes or changes an owner.',
    example: {
      id: 7,
      name: 'Sam Support',
      email: 'sam@acme.example',
      role: 'member',
      account_owner: false,
      changed: true,
      mailed: true,
    },
    requestExamples: {
      'application/json': { email: 'sam@acme.example', name: 'Sam Support', role: 'member' },
      'application/x-www-form-urlencoded': { email: 'sam@acme.example', role: 'admin' },
    },
    errors: {
      ...BODY_ERRORS,
      '422': {
        description:
          'The address or name is not valid, nobody with that address is on the team (`none`), or the change ' +
          'would take the account’s owner off its owners',
        codes: ['invalid_input'],
      },
    },
  },
} satisfies OperationSpec;
