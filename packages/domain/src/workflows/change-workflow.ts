import { type Actor, requireIntakeManager } from '../conversations/access.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { WorkflowDefinitionView, WorkflowStore } from './manage-workflows.ts';
import { checkReferences, parseWorkflowSteps, workflowDefinitionView } from './manage-workflows.ts';

export async function changeWorkflow(
  store: WorkflowStore,
  account: Pick<AccountContext, 'id'>,
  id: number,
  input: { name?: string | undefined; steps?: unknown; disabled?: boolean | undefined },
  actor: Actor,
): Promise<WorkflowDefinitionView> {
  requireIntakeManager(actor);
  const steps = input.steps === undefined ? undefined : parseWorkflowSteps(input.steps);
  if (steps) await checkReferences(store, account.id, steps);
  const changed = await store.change(account.id, id, { name: input.name?.trim(), steps, disabled: input.disabled });
  if (!changed) throw new DomainError('workflow_not_found');
  return workflowDefinitionView(changed);
}
