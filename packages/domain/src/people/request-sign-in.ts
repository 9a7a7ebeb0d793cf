import type { SiteAccount } from '../records.ts';
import { emailProblem } from '../shared/person.ts';
import { type LinkOptions, type PeopleDeps, returnPath, sendSignInLink } from './people.ts';

/**
 * Someone asks for a sign-in link. It is mailed to any well-formed address, with the same work
 * either way: the form cannot tell who is a user. Opening it says whether the address is someone's.
 */
export async function requestSignIn(
  deps: Pick<PeopleDeps, 'people' | 'outbox'>,
  account: SiteAccount,
  email: string,
  back: string,
  link: LinkOptions,
): Promise<{ refused: string } | null> {
  const problem = emailProblem(email);
  if (problem) return { refused: problem };
  await sendSignInLink(deps, account, link, {
    email: email.trim(),
    name: null,
    returnPath: returnPath(back),
    pending: null,
  });
  return null;
}
