import { DOMAIN_ERRORS, MAX_WORKFLOWS } from '@convo/domain';
import type { OperationError } from '../../operation.ts';

/* What the workflow procedures share beside the wire shapes (the domain's). */

export const workflowExample = {
  id: 4,
  name: 'Welcome and follow up',
  steps: [
    {
      trigger: { type: 'conversation.created' },
      action: { type: 'post_message', as: 'sam@acme.example', text: 'Thanks for writing! We answer within a day.' },
    },
    { trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['support'] } },
    {
      trigger: { type: 'no_reply', from: 'team', within_seconds: 86_400 },
      action: { type: 'notify', emails: ['sam@acme.example'], text: 'Nobody has answered for a day.' },
    },
  ],
  disabled: false,
  created_at: '2026-11-22T10:15:00.000Z',
  updated_at: '2026-11-22T10:15:00.000Z',
};

export const workflowRules =
  'A workflow is a list of 1 to 20 steps, each a `trigger` and an `action` (the WorkflowTrigger and ' +
  'WorkflowAction schemas). The team members, people and recordings a step names must be the account’s: ' +
  `a step that names anyone else is refused when saved. An account may keep up to ${MAX_WORKFLOWS} workflows. ` +
  'A conversation created through an intake page gets a copy of its workflow (its `workflow` member, with each ' +
  'step’s state); changing or disabling the workflow later leaves the copies made as they are.';

export const workflowNotFound: OperationError = {
  description: DOMAIN_ERRORS.workflow_not_found.message,
  codes: ['workflow_not_found'],
};
