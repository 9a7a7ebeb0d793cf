import type { SiteAccount } from '../records.ts';
import { emailProblem, nameProblem } from '../shared/person.ts';
import type { MemberDeps, MemberOutcome, MemberRequest } from './conversation-members.ts';
import { invitation, refusedSlug } from './conversation-members.ts';
import { slugKey } from './slug.ts';

export async function addConversationMember(
  deps: MemberDeps,
  account: SiteAccount,
  request: MemberRequest,
): Promise<MemberOutcome> {
  if (refusedSlug(request.slug)) return { kind: 'not_found' };
  const email = request.email.trim();
  const emailRefusal = emailProblem(email);
  if (emailRefusal) return { kind: 'refused', problem: emailRefusal };
  const name = request.name?.trim() || null;
  if (name !== null) {
    const nameRefusal = nameProblem(name);
    if (nameRefusal) return { kind: 'refused', problem: nameRefusal };
  }
  const key = slugKey(request.slug);
  // A second try finds the user a concurrent add of the same new address made.
  let change = await deps.members.addConversationMember(account.id, key, { email, name });
  if (change && change.person === null && name !== null)
    change = await deps.members.addConversationMember(account.id, key, { email, name });
  if (!change) return { kind: 'not_found' };
  if (change.person === null) {
    return { kind: 'refused', problem: `${email} is nobody's on ${account.name} yet: give their name to add them.` };
  }
  if (change.changed)
    await deps.outbox.enqueue(account.id, { to: change.person.email, ...invitation(account, change) });
  return { kind: 'done', change };
}
