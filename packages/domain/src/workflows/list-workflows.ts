import type { AccountContext } from '../records.ts';
import type { WorkflowDefinitionView, WorkflowStore } from './manage-workflows.ts';
import { workflowDefinitionView } from './manage-workflows.ts';

export async function listWorkflows(
  store: WorkflowStore,
  account: Pick<AccountContext, 'id'>,
): Promise<WorkflowDefinitionView[]> {
  return (await store.list(account.id)).map(workflowDefinitionView);
}
