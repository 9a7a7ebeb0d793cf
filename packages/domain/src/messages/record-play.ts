import type { Viewer } from '../conversations/access.ts';
import { type RecordingReader, recordingReader } from '../conversations/open-recording.ts';
import type { PageMessageRecord, SiteStore } from '../conversations/ports.ts';
import { slugGiven } from '../conversations/view-message.ts';
import type { Authenticated, SiteAccount } from '../records.ts';
import { type PlayedMessage, type PlaySummary, playCounts, seesPlays } from './plays.ts';
import type { PlayStore } from './ports.ts';

/** Message ids are PostgreSQL serials: positive and below 2^31. */
const MAX_MESSAGE_ID = 2_147_483_647;

/**
 * A play the site's player reports (its beacon), by whoever may play the recording (the
 * recording's own rule, openRecording's): kept once per message and `session` (the beacon sent
 * again, a second play, changes nothing), and only as a receipt (playCounts: never the message's
 * own side's). The beacon names the message's conversation by its slug (`reader.slug`): another
 * conversation's is missing. `missing` when there is no such recording this reader may play (the
 * site's 404); else `counted` or `ignored`, alike to the player, which cannot tell them apart.
 */
export async function recordPlay(
  deps: { site: SiteStore; plays: PlayStore; authenticate(token: string): Promise<Authenticated | null> },
  account: SiteAccount,
  messageId: number,
  reader: RecordingReader & { session: string },
): Promise<'counted' | 'ignored' | 'missing'> {
  if (!Number.isSafeInteger(messageId) || messageId < 1 || messageId > MAX_MESSAGE_ID) return 'missing';
  const found = await deps.site.mediaOf(account.id, messageId);
  const viewer = found ? await recordingReader(deps, account, found, reader) : undefined;
  if (!found || viewer === undefined || !slugGiven(found.conversation, reader.slug)) return 'missing';
  if (!playCounts(found, viewer)) return 'ignored';
  const kept = await deps.plays.record({
    accountId: account.id,
    conversationId: found.conversation.id,
    messageId,
    viewerId: viewer?.userId ?? null,
    sessionKey: reader.session,
  });
  return kept ? 'counted' : 'ignored';
}

/** A message of a page, as the receipt rules ask of it. */
const playedMessage = (m: PageMessageRecord): PlayedMessage => ({
  authorId: m.author.anonymous ? null : m.author.id,
  authorOnTeam: m.authorTeamRole !== null,
});

/** Does this viewer's player report a play of `m` (a recording kept here, whose play would be a receipt)? */
export const reportsPlay =
  (viewer: Viewer) =>
  (m: PageMessageRecord): boolean =>
    m.hostedMedia && playCounts(playedMessage(m), viewer);

/**
 * The receipts a page shows this viewer, by message: of each recording kept here whose receipts
 * they see (seesPlays: the team every message's, a person their own's). Nobody else's page reads
 * them at all.
 */
export async function playsShown(
  deps: { plays: PlayStore },
  accountId: number,
  viewer: Viewer,
  messages: readonly PageMessageRecord[],
): Promise<Map<number, PlaySummary>> {
  const shown = messages.filter((m) => m.hostedMedia && seesPlays(viewer, playedMessage(m).authorId));
  if (shown.length === 0) return new Map();
  const found = await deps.plays.summaries(
    accountId,
    shown.map((m) => m.id),
  );
  return new Map(shown.map((m) => [m.id, found.get(m.id) ?? { names: [], visitors: 0 }]));
}
