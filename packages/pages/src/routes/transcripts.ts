import type { KeptTranscript, PageMessageRecord } from '@convo/domain';
import type { SiteKit } from '../posting.ts';

/*
 * Transcripts on the pages (docs/pages.md, "Transcripts and captions"): under each recording its
 * words, folded, and captions on its player, once the operator's speech engine has made them.
 * Whoever sees the message sees its transcript: it says what the recording says.
 */

/** The transcripts of the recordings among `messages` that are made, by message. */
export async function transcriptsShown(
  { deps }: Pick<SiteKit, 'deps'>,
  accountId: number,
  messages: readonly PageMessageRecord[],
): Promise<ReadonlyMap<number, KeptTranscript>> {
  const recorded = messages.filter((m) => m.hostedMedia).map((m) => m.id);
  return recorded.length === 0 ? new Map() : deps.transcripts.byMessages(accountId, recorded);
}
