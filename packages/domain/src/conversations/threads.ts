import type { ReplyStore } from '../people/ports.ts';
import { seesInternalNotes, type Viewer } from './access.ts';

/**
 * Where a reply under message `parentId` goes (the reply form of a thread's page, create_message's
 * `parent_message_id`): threads are one level deep, so it joins the thread of that message's first
 * message, and a reply in an internal note's thread is a note too. Null when the conversation has
 * no such message that `reader` sees (the account's token sees every one); no parent: the
 * conversation itself. `recording`: the thread's first message's length, when it is a recording
 * (a reply's moment lies within it: moments.ts).
 */
export async function replyThread(
  replies: Pick<ReplyStore, 'threadOf'>,
  accountId: number,
  conversationId: number,
  parentId: number | undefined,
  reader: Viewer | 'account',
): Promise<{ parentId: number | null; internal: boolean; recording: { seconds: number } | null } | null> {
  if (parentId === undefined) return { parentId: null, internal: false, recording: null };
  const thread = await replies.threadOf(accountId, conversationId, parentId);
  if (!thread || (thread.internal && reader !== 'account' && !seesInternalNotes(reader))) return null;
  return { parentId: thread.rootId, internal: thread.internal, recording: thread.recording };
}
