import type { Viewer } from '../conversations/access.ts';
import type { PageMessageRecord, SiteStore } from '../conversations/ports.ts';
import { slugGiven, viewMessage } from '../conversations/view-message.ts';
import type { SiteAccount } from '../records.ts';
import type { ReactionStore } from './ports.ts';
import { type ReactionCount, type ReactionName, reactorKey, reactorOf, seesReactors } from './reactions.ts';

/** What a page's reader asks of a message's reactions: add one kind, or take one back. */
export type ReactionChange = { add: ReactionName } | { remove: ReactionName };

/** Who reacts on a page: the reader as the page knows them, and their browser session's key. */
export interface PageReactor {
  viewer: Viewer;
  /** The conversation an anonymous visitor's device started (its pass opens it). */
  granted: number | null;
  /** The conversation's slug, as the request carried it. */
  slug: string;
  /** A hash of the session's cookie (64 hex digits): an anonymous visitor's reactions are kept under it. */
  session: string;
}

/**
 * A reaction on a page: on a message this reader sees (the page's rule, viewMessage's), in the
 * conversation the address names, by a person or (where the conversation takes anonymous
 * messages) a visitor's session. `missing`: no such message for this reader (the site's 404);
 * `refused`: they see it, but may not react (a visitor where anonymous messages are off).
 */
export async function reactOnPage(
  deps: { site: SiteStore; reactions: ReactionStore },
  account: SiteAccount,
  messageId: number,
  reader: PageReactor,
  change: ReactionChange,
): Promise<'missing' | 'refused' | 'done'> {
  const found = await viewMessage(deps, account, messageId, reader.viewer, reader.granted, reader.slug);
  if (!found || !slugGiven(found.conversation, reader.slug)) return 'missing';
  const reactor = reactorOf(reader.viewer, found.conversation, reader.session);
  if (!reactor) return 'refused';
  const key = reactorKey(reactor);
  const kept =
    'add' in change
      ? await deps.reactions.add({
          accountId: account.id,
          messageId,
          reaction: change.add,
          userId: 'userId' in reactor ? reactor.userId : null,
          reactorKey: key,
        })
      : await deps.reactions.remove({ accountId: account.id, messageId, reaction: change.remove, reactorKey: key });
  return kept === 'missing' ? 'missing' : 'done';
}

/**
 * The reactions a page shows this reader, by message (those with any): the counts, their own, and
 * for the team who reacted.
 */
export async function reactionsShown(
  deps: { reactions: ReactionStore },
  accountId: number,
  reader: { viewer: Viewer; session: string },
  messages: readonly PageMessageRecord[],
): Promise<Map<number, ReactionCount[]>> {
  const reacted = messages.filter((m) => m.reacted);
  if (reacted.length === 0) return new Map();
  const key = reader.viewer ? reactorKey({ userId: reader.viewer.userId }) : reader.session;
  const kept = await deps.reactions.summaries(
    accountId,
    reacted.map((m) => m.id),
    key,
  );
  const named = seesReactors(reader.viewer);
  return new Map(
    [...kept].map(([id, list]) => [
      id,
      list.map((r) => ({
        reaction: r.reaction,
        count: r.count,
        mine: r.mine,
        names: named ? r.users.map((u) => u.name || 'someone') : [],
      })),
    ]),
  );
}
