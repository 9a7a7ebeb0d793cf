import { type Actor, requireIntakeManager } from '../conversations/access.ts';
import type { AccountContext } from '../records.ts';
import { MAX_INTAKE_PAGES } from '../shared/limits.ts';
import type { IntakePageAdminStore, IntakePageInput, IntakePageView } from './intake-pages.ts';
import { draftOf, keyFromName, saved } from './intake-pages.ts';

export async function createIntakePage(
  store: IntakePageAdminStore,
  account: Pick<AccountContext, 'id'>,
  input: IntakePageInput & { name: string },
  actor: Actor,
): Promise<IntakePageView> {
  requireIntakeManager(actor);
  const draft = await draftOf(store, account.id, input, null);
  // A key made from the name moves aside for a page that has it: `twin`, then `twin-2`, `twin-3`…
  for (let n = 2; ; n++) {
    const write = await store.create(account.id, draft, MAX_INTAKE_PAGES);
    if (write.kind !== 'key_taken' || input.key !== undefined || n > MAX_INTAKE_PAGES + 1) return saved(write);
    const base = keyFromName(draft.name)
      .slice(0, 60 - `-${n}`.length)
      .replace(/-+$/, '');
    draft.key = `${base}-${n}`;
  }
}
