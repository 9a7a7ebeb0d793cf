import type { SiteAccount, UserRecord } from '../records.ts';
import type { PeopleDeps } from './people.ts';
import type { SignInLinkRecord } from './ports.ts';

const LINK_TOKEN = /^[\w-]{20,100}$/;

/** What the page behind a sign-in link shows before anything happens: for whom, and the reply that waits. */
export type OpenedLink = SignInLinkRecord & { user: UserRecord | null };

/** A sign-in link that can still be confirmed, or null (unknown, used or expired). Reading it changes nothing. */
export async function openSignInLink(
  deps: Pick<PeopleDeps, 'people'>,
  account: SiteAccount,
  token: string,
): Promise<OpenedLink | null> {
  if (!LINK_TOKEN.test(token)) return null;
  return deps.people.peekSignInLink(account.id, token);
}
