import type { Viewer } from '../conversations/access.ts';
import type { PageMessageRecord } from '../conversations/ports.ts';
import { type PlayedMessage, type PlaySummary, playCounts, seesPlays } from './plays.ts';
import type { NewPlay, PlayStore } from './ports.ts';

/**
 * The plays the site's beacons report, kept in batches: a beacon is checked by what it carries
 * (its page's signed ticket, given only where reportsPlay says the play is a receipt) and answered
 * at once, and its play waits here at most `waitMs` (or until `maxPlays` wait) to be written with
 * the others in one statement (PlayStore.record), which keeps each once per message and session.
 * A play reported again before then is one play; one reported again after it was written is
 * known here (the last `remembered` plays written, by message and session) and not written again.
 * What waits is lost if the process dies before writing it (at most `waitMs` of plays); a server
 * that stops writes it first (flush).
 */
export class PlayBuffer {
  private readonly store: Pick<PlayStore, 'record'>;
  private readonly options: {
    waitMs: number;
    maxPlays: number;
    /** How many plays written this process remembers, so that one reported again costs no statement. */
    remembered: number;
    onError(err: unknown, plays: number): void;
  };
  private pending = new Map<string, NewPlay>();
  /** The plays written, oldest first (a Set keeps the order they came in). */
  private readonly written = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The batches being written, one after another (so a message's first play is first once). */
  private writing: Promise<void> = Promise.resolve();

  constructor(store: Pick<PlayStore, 'record'>, options: PlayBuffer['options']) {
    this.store = store;
    this.options = options;
  }

  add(play: NewPlay): void {
    const key = playKey(play);
    if (this.pending.has(key) || this.written.has(key)) return;
    this.pending.set(key, play);
    if (this.pending.size >= this.options.maxPlays) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.waitMs);
  }

  /** Writes the plays waiting now, after the batches under way: when the server stops, or a test reads them. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.writing = this.writing.then(async () => {
      if (batch.length === 0) return;
      try {
        await this.store.record(batch);
      } catch (err) {
        this.options.onError(err, batch.length);
        return;
      }
      // Each is kept now, or was before, or its recording is no longer shown: written either way.
      for (const play of batch) this.written.add(playKey(play));
      for (const key of this.written) {
        if (this.written.size <= this.options.remembered) break;
        this.written.delete(key);
      }
    });
    return this.writing;
  }
}

/** A play as it is kept once: by message and session (a session key's first 32 hex digits are as unique). */
const playKey = (play: NewPlay) => `${play.messageId}:${play.sessionKey.slice(0, 32)}`;

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
