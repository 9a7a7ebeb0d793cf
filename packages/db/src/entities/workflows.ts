import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './accounts.ts';
import { createdAt } from './columns.ts';
import { Conversation } from './conversations.ts';

/*
 * A workflow's runs: the steps due per conversation and the messages they weigh.
 */

/** One step of a conversation's workflow copy, due at a time: run once (unique per step and occurrence). */
export const WorkflowJob = defineEntity({
  name: 'WorkflowJob',
  properties: {
    id: p.integer().primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    conversation: () => p.manyToOne(Conversation).deleteRule('cascade'),
    step: p.smallint(),
    occurrence: p.string().length(40),
    messageId: p.integer().nullable(),
    dueAt: p.datetime().columnType('timestamptz(6)'),
    state: p.string().length(16).default('pending'),
    attempts: p.integer().default(0),
    lastError: p.text().nullable(),
    doneAt: p.datetime().columnType('timestamptz(6)').nullable(),
    createdAt: createdAt(),
  },
  indexes: [
    {
      name: 'workflow_job_once',
      expression: 'create unique index "workflow_job_once" on "workflow_job" ("conversation_id", "step", "occurrence")',
    },
    {
      name: 'workflow_job_due',
      expression: `create index "workflow_job_due" on "workflow_job" ("due_at") where "state" = 'pending'`,
    },
  ],
  checks: [{ name: 'workflow_job_state_known', expression: `"state" in ('pending', 'done', 'failed', 'skipped')` }],
});

/**
 * A message posted in a conversation with a workflow (or, `played`, its first played receipt), for
 * the workflow worker to weigh.
 */
export const WorkflowEvent = defineEntity({
  name: 'WorkflowEvent',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    account: () => p.manyToOne(Account).deleteRule('cascade'),
    conversation: () => p.manyToOne(Conversation).deleteRule('cascade'),
    messageId: p.integer().nullable(),
    authorId: p.integer().nullable(),
    /** A play of the message (its author's side is `author_id`'s), not its posting. */
    played: p.boolean().default(false),
    createdAt: createdAt(),
  },
});
