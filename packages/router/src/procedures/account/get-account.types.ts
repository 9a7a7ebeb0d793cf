import { ZAccount } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';

export const ZGetAccountInput = z.object({});

export const getAccountSpec = {
  input: ZGetAccountInput.prefault({}),
  output: ZAccount,
  meta: {
    openapi: {
      method: 'GET',
      path: '/account',
      summary: "The token's account: its key, name, host and the defaults new conversations take",
      tags: ['account'],
      protect: true,
    },
  },
  doc: {
    description:
      'The account the API token belongs to. `host` is the origin its conversation addresses are built on; ' +
      '`defaults` are the flags a conversation takes when create omits them.',
    example: {
      key: 'acme',
      name: 'Acme',
      host: 'https://acme.example.com',
      defaults: { anyone_can_post: true, allow_anonymous_messages: true, allow_search_engines: false },
    },
    errors: {},
  },
} satisfies OperationSpec;
