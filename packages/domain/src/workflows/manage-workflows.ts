import { z } from 'zod';

import { DomainError } from '../shared/errors.ts';

import { ZText } from '../shared/text.ts';

import { type WorkflowStep, ZWorkflowStep, ZWorkflowSteps } from '../shared/workflow-steps.ts';

import { runnableSteps } from './rules.ts';

/*
 * An account's workflows as its team manages them (the API, the CLI, the site): create one,
 * change it, disable it, list them. Steps are checked twice when saved: their form (the zod
 * schemas of workflows.ts), and what they name (the team members, people and recordings must be
 * the account's own).
 */

export const ZWorkflowId = z.number().int().min(1).max(2_147_483_647);

export const ZWorkflowName = ZText('name').pipe(z.string().trim().min(1).max(255));

/** A workflow as the team sees it (a conversation sees its own copy: ZWorkflowStepState). */
export const ZWorkflowDefinition = z
  .object({
    id: ZWorkflowId,
    name: z.string(),
    steps: z.array(ZWorkflowStep),
    disabled: z.boolean().meta({
      description:
        'A disabled workflow is no longer copied onto new conversations; the copies conversations already have keep running.',
    }),
    created_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
    updated_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
  })
  .meta({ id: 'WorkflowDefinition' });

export type WorkflowDefinitionView = z.infer<typeof ZWorkflowDefinition>;

/** A workflow as stored: its steps as saved (ones saved before steps had a form do not parse). */
export interface WorkflowDefinitionRecord {
  id: number;
  name: string;
  steps: unknown[];
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the steps of a workflow name, as the account knows them (addresses lower-cased). */
export interface WorkflowReferences {
  /** Addresses of the account's team members. */
  team: Set<string>;
  /** Addresses of any of the account's people. */
  people: Set<string>;
  /** Ids of the account's messages whose recording this server keeps. */
  recordings: Set<number>;
  /** Ids of the account's message templates. */
  templates: Set<number>;
}

export interface WorkflowStore {
  list(accountId: number): Promise<WorkflowDefinitionRecord[]>;
  find(accountId: number, id: number): Promise<WorkflowDefinitionRecord | null>;
  /** Stores a new workflow unless the account has `max` (then null), in one step. */
  create(
    accountId: number,
    workflow: { name: string; steps: WorkflowStep[] },
    max: number,
  ): Promise<WorkflowDefinitionRecord | null>;
  /** Changes what is given; null when the account has no such workflow. */
  change(
    accountId: number,
    id: number,
    change: { name?: string | undefined; steps?: WorkflowStep[] | undefined; disabled?: boolean | undefined },
  ): Promise<WorkflowDefinitionRecord | null>;
  references(
    accountId: number,
    emails: string[],
    messageIds: number[],
    templateIds: number[],
  ): Promise<WorkflowReferences>;
}

export const workflowDefinitionView = (r: WorkflowDefinitionRecord): WorkflowDefinitionView => ({
  id: r.id,
  name: r.name,
  steps: runnableSteps(r.steps),
  disabled: r.disabledAt !== null,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});

/** Refuses steps that name anyone or anything the account does not have, saying which step. */
export async function checkReferences(store: WorkflowStore, accountId: number, steps: WorkflowStep[]): Promise<void> {
  const emails = new Set<string>();
  const messageIds = new Set<number>();
  const templateIds = new Set<number>();
  for (const { action: a } of steps) {
    if (a.type === 'post_message') {
      emails.add(a.as.trim().toLowerCase());
      if (a.recording_message_id !== undefined) messageIds.add(a.recording_message_id);
      if (a.template_id !== undefined) templateIds.add(a.template_id);
    }
    if (a.type === 'add_members' || a.type === 'notify') {
      for (const e of a.emails) emails.add(e.trim().toLowerCase());
    }
  }
  const known = await store.references(accountId, [...emails], [...messageIds], [...templateIds]);
  const problems: string[] = [];
  steps.forEach(({ action: a }, i) => {
    const at = `steps[${i}].action`;
    const lower = (e: string) => e.trim().toLowerCase();
    if (a.type === 'post_message') {
      if (!known.team.has(lower(a.as))) problems.push(`${at}.as: ${a.as} is not on the account's team`);
      if (a.recording_message_id !== undefined && !known.recordings.has(a.recording_message_id)) {
        problems.push(`${at}.recording_message_id: message ${a.recording_message_id} has no recording kept here`);
      }
      if (a.template_id !== undefined && !known.templates.has(a.template_id)) {
        problems.push(`${at}.template_id: no message template ${a.template_id} in this account`);
      }
    }
    if (a.type === 'notify') {
      for (const e of a.emails) if (!known.team.has(lower(e))) problems.push(`${at}.emails: ${e} is not on the team`);
    }
    if (a.type === 'add_members') {
      for (const e of a.emails) {
        if (!known.people.has(lower(e))) problems.push(`${at}.emails: ${e} is not one of the account's people`);
      }
    }
  });
  if (problems.length > 0) throw new DomainError('invalid_input', problems.join('; '));
}

/** Steps from anywhere (the API has parsed them already; a CLI or seed has not), or a clear refusal. */
export function parseWorkflowSteps(steps: unknown): WorkflowStep[] {
  const parsed = ZWorkflowSteps.safeParse(steps);
  if (!parsed.success)
    throw new DomainError('invalid_input', `steps: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`);
  return parsed.data;
}

/** A workflow's name as a form sent it (the team's site), by the API's rule. */
export function parseWorkflowName(name: string): string {
  const parsed = ZWorkflowName.safeParse(name);
  if (!parsed.success) throw new DomainError('invalid_input', `name: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}
