import type { SiteAccount } from '../records.ts';
import { managesMembers, maySee, type Viewer } from './access.ts';
import { addConversationMember } from './add-conversation-member.ts';
import type { MemberDeps, MemberRequest, TeamMemberOutcome } from './conversation-members.ts';
import type { SiteStore } from './ports.ts';
import { removeConversationMember } from './remove-conversation-member.ts';
import { slugKey, slugProblem } from './slug.ts';

/**
 * A change of members from a conversation's page: by someone on the account's team who may see
 * the conversation (anyone else who may see it is refused; to those who may not, it does not exist).
 */
export async function changeMembersOnPage(
  deps: MemberDeps & { site: SiteStore },
  account: SiteAccount,
  viewer: Viewer,
  request: MemberRequest & { remove: boolean },
): Promise<TeamMemberOutcome> {
  const access = slugProblem(request.slug)
    ? null
    : await deps.site.conversationAccess(account.id, slugKey(request.slug));
  if (!access || !maySee(access, access.memberIds, viewer)) return { kind: 'not_found' };
  if (!managesMembers(viewer)) return { kind: 'forbidden' };
  return request.remove
    ? removeConversationMember(deps, account, request)
    : addConversationMember(deps, account, request);
}
