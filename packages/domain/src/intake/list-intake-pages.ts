import type { AccountContext } from '../records.ts';
import type { IntakePageAdminStore, IntakePageView } from './intake-pages.ts';
import { intakePageView } from './intake-pages.ts';

export async function listIntakePages(
  store: IntakePageAdminStore,
  account: Pick<AccountContext, 'id'>,
): Promise<IntakePageView[]> {
  return (await store.list(account.id)).map(intakePageView);
}
