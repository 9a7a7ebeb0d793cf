import { ZGetTeamAnswer } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';

export const ZGetTeamInput = z.object({});

export const getTeamSpec = {
  input: ZGetTeamInput.prefault({}),
  output: ZGetTeamAnswer,
  meta: {
    openapi: {
      method: 'GET',
      path: '/team/get_team',
      summary: 'List the team',
      tags: ['team'],
      protect: true,
    },
  },
  doc: {
    description:
      'Not in the original service: the account’s team, owners first, then admins, then members, each by name. ' +
      'Participants (people who are only in conversations) are not listed.',
    example: {
      team: [
        { id: 1, name: 'Olivia Owner', email: 'olivia@acme.example', role: 'owner', account_owner: true },
        { id: 7, name: 'Sam Support', email: 'sam@acme.example', role: 'member', account_owner: false },
      ],
    },
    errors: {},
  },
} satisfies OperationSpec;
