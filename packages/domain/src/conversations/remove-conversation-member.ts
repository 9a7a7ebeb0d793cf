import type { SiteAccount } from '../records.ts';
import type { MemberDeps, MemberOutcome, MemberRequest } from './conversation-members.ts';
import { refusedSlug } from './conversation-members.ts';
import { slugKey } from './slug.ts';

export async function removeConversationMember(
  deps: Pick<MemberDeps, 'members'>,
  account: SiteAccount,
  request: Pick<MemberRequest, 'slug' | 'email'>,
): Promise<MemberOutcome> {
  if (refusedSlug(request.slug)) return { kind: 'not_found' };
  const change = await deps.members.removeConversationMember(account.id, slugKey(request.slug), request.email.trim());
  return change ? { kind: 'done', change } : { kind: 'not_found' };
}
