import { type Actor, requireIntakeManager } from '../conversations/access.ts';
import type { AccountContext } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import type { IntakePageAdminStore, IntakePageInput, IntakePageView } from './intake-pages.ts';
import { draftOf, saved } from './intake-pages.ts';

export async function changeIntakePage(
  store: IntakePageAdminStore,
  account: Pick<AccountContext, 'id'>,
  id: number,
  input: IntakePageInput,
  actor: Actor,
): Promise<IntakePageView> {
  requireIntakeManager(actor);
  const current = await store.find(account.id, id);
  if (!current) throw new DomainError('intake_page_not_found');
  return saved(await store.change(account.id, id, await draftOf(store, account.id, input, current)));
}
