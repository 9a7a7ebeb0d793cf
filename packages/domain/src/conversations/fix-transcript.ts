import type { SiteAccount } from '../records.ts';
import type { TranscriptStore } from '../transcripts/transcript-views.ts';
import { transcriptText } from '../transcripts/transcripts.ts';
import { managesMembers, maySee, type Viewer } from './access.ts';
import type { SiteStore } from './ports.ts';
import { slugKey, slugProblem } from './slug.ts';

/*
 * The team's hand on a recording's transcript, on the conversation's page: make it again (after a
 * failure, or to try a better engine or model), or correct its words, one line per caption (the
 * times stay the engine's), which the captions and the search then follow.
 */

export type TranscriptFix = { action: 'retry' } | { action: 'correct'; lines: readonly string[] };

export type TranscriptFixOutcome =
  | { kind: 'not_found' }
  | { kind: 'forbidden'; problem: string }
  | { kind: 'invalid'; problem: string }
  | { kind: 'done'; slug: string };

/** The longest a caption's line may be. */
export const TRANSCRIPT_LINE_MAX = 1000;

export async function fixTranscript(
  deps: { site: SiteStore; transcripts: TranscriptStore },
  account: SiteAccount,
  viewer: Viewer,
  slug: string,
  messageId: number,
  fix: TranscriptFix,
): Promise<TranscriptFixOutcome> {
  const access = slugProblem(slug) ? null : await deps.site.conversationAccess(account.id, slugKey(slug));
  if (!viewer || !access || !maySee(access, access.memberIds, viewer)) return { kind: 'not_found' };
  if (!managesMembers(viewer)) {
    return { kind: 'forbidden', problem: "Only the account's team corrects transcripts or makes them again." };
  }
  const where = { accountId: account.id, conversationId: access.id, messageId };
  if (fix.action === 'retry') {
    return (await deps.transcripts.retry(where)) ? { kind: 'done', slug: access.slug } : { kind: 'not_found' };
  }
  const kept = (await deps.transcripts.byMessages(account.id, [messageId])).get(messageId);
  if (kept?.status !== 'complete') return { kind: 'not_found' };
  const lines = [...fix.lines];
  while (lines.length > kept.segments.length && lines.at(-1)?.trim() === '') lines.pop();
  if (lines.length !== kept.segments.length) {
    const n = kept.segments.length;
    return {
      kind: 'invalid',
      problem: `Keep one line for each of the ${n} caption${n === 1 ? '' : 's'}: correct the words, not the lines.`,
    };
  }
  if (lines.some((l) => l.length > TRANSCRIPT_LINE_MAX)) {
    return { kind: 'invalid', problem: `A caption's line may be at most ${TRANSCRIPT_LINE_MAX} characters.` };
  }
  const segments = kept.segments.map((s, i) => ({ ...s, text: (lines[i] ?? '').trim() }));
  const corrected = await deps.transcripts.correct(where, segments, transcriptText(segments), viewer.userId);
  return corrected ? { kind: 'done', slug: access.slug } : { kind: 'not_found' };
}
