import { type Actor, requireIntakeManager } from '../conversations/access.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { MAX_WORKFLOWS } from '../shared/limits.ts';
import type { WorkflowDefinitionView, WorkflowStore } from './manage-workflows.ts';
import { checkReferences, parseWorkflowSteps, workflowDefinitionView } from './manage-workflows.ts';

export async function createWorkflow(
  store: WorkflowStore,
  account: Pick<AccountContext, 'id'>,
  input: { name: string; steps: unknown },
  actor: Actor,
): Promise<WorkflowDefinitionView> {
  requireIntakeManager(actor);
  const steps = parseWorkflowSteps(input.steps);
  await checkReferences(store, account.id, steps);
  const made = await store.create(account.id, { name: input.name.trim(), steps }, MAX_WORKFLOWS);
  if (!made) throw new DomainError('workflow_limit_reached');
  return workflowDefinitionView(made);
}
