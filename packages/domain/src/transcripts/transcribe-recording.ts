import {
  type Transcriber,
  type TranscriberAudio,
  type Transcript,
  TranscriptionFailed,
  transcriptText,
} from './transcripts.ts';

/*
 * The transcript job (issue 43): each recording kept is transcribed once, by whichever replica
 * claims it first; an engine that is down, busy or slow is tried again on a schedule, and a
 * recording it cannot transcribe is given up with the reason. The audio is the recording's own
 * (RecordingAudio, which the server extracts without decoding), in one file or in overlapping
 * windows whose segments are joined here.
 */

/** Where a recording's transcript stands; `off` where no engine is configured. */
export const TRANSCRIPT_STATUSES = ['off', 'pending', 'complete', 'no_audio', 'failed'] as const;
export type TranscriptStatus = (typeof TRANSCRIPT_STATUSES)[number];

/**
 * When a failed try is made again, after the first: 30 s, 2 min, 10 min, 30 min, 2 h (each ±20 %,
 * times TRANSCRIBE_RETRY_SCALE): six tries in all over about three hours, then it is failed.
 */
export const TRANSCRIBE_RETRY_SECONDS = [30, 120, 600, 1800, 7200];

/** The delay before the try after `attempts` made, or null when the last was made. */
export function transcribeRetryDelaySeconds(attempts: number, random = Math.random()): number | null {
  const base = TRANSCRIBE_RETRY_SECONDS[attempts - 1];
  if (base === undefined) return null;
  return base * (0.8 + 0.4 * random);
}

/** A recording whose transcript is due, as its job claimed it (`attempts` counts this try). */
export interface DueRecording {
  mediaKey: string;
  accountId: number;
  attempts: number;
}

/** A file of a recording's audio, and where in the recording it starts. */
export interface AudioWindow extends TranscriberAudio {
  offsetSeconds: number;
  /** Seconds it shares with the window before it (0 for the first). */
  overlapSeconds: number;
}

/** What came of reading a recording's audio. */
export type RecordingAudioOutcome =
  | { ok: true; windows: AudioWindow[] }
  | { ok: false; noAudio: true }
  | { ok: false; noAudio: false; reason: string; retryable: boolean };

/** The server's side: a recording's audio as files for the engine, let go of once sent. */
export interface RecordingAudio {
  audioOf(mediaKey: string): Promise<{ outcome: RecordingAudioOutcome; release(): Promise<void> }>;
}

/** What a try came to, as the job's store keeps it. */
export type TranscriptOutcome =
  | { kind: 'complete'; transcript: Transcript }
  | { kind: 'no_audio' }
  | { kind: 'retry'; reason: string; inSeconds: number }
  | { kind: 'failed'; reason: string };

export interface TranscriptJobStore {
  /** Up to `limit` due recordings, each held from other replicas for `leaseSeconds` and its try counted. */
  claim(limit: number, leaseSeconds: number): Promise<DueRecording[]>;
  /** Keeps what a try came to (a complete transcript also tells the webhooks and the search). */
  settle(due: DueRecording, outcome: TranscriptOutcome): Promise<void>;
}

export interface TranscribeDeps {
  transcriber: Transcriber;
  audio: RecordingAudio;
  /** Seconds until the next try after `attempts` failed ones, or null: give up. */
  retryDelay?: (attempts: number) => number | null;
}

/** One try at a recording's transcript: what it came to, never a throw for an engine's failure. */
export async function transcribeRecording(deps: TranscribeDeps, due: DueRecording): Promise<TranscriptOutcome> {
  const retryDelay = deps.retryDelay ?? transcribeRetryDelaySeconds;
  const failure = (reason: string, retryable: boolean): TranscriptOutcome => {
    const inSeconds = retryable ? retryDelay(due.attempts) : null;
    return inSeconds === null ? { kind: 'failed', reason } : { kind: 'retry', reason, inSeconds };
  };
  const { outcome, release } = await deps.audio.audioOf(due.mediaKey);
  try {
    if (!outcome.ok) return outcome.noAudio ? { kind: 'no_audio' } : failure(outcome.reason, outcome.retryable);
    const heard = [];
    for (const window of outcome.windows)
      heard.push({ ...window, transcript: await deps.transcriber.transcribe(window) });
    return { kind: 'complete', transcript: joinWindows(heard) };
  } catch (err) {
    if (err instanceof TranscriptionFailed) return failure(err.message, err.retryable);
    throw err;
  } finally {
    await release();
  }
}

/**
 * The transcripts of overlapping windows as one: each window's segments moved to the recording's
 * time, and where two windows overlap, the earlier one's segments that start before the middle of
 * the overlap and the later one's from there.
 */
export function joinWindows(
  heard: readonly (Pick<AudioWindow, 'offsetSeconds' | 'overlapSeconds'> & { transcript: Transcript })[],
): Transcript {
  const cuts = heard.map((h, i) => (i === 0 ? Number.NEGATIVE_INFINITY : h.offsetSeconds + h.overlapSeconds / 2));
  const segments = heard.flatMap(({ offsetSeconds, transcript }, i) => {
    const from = cuts[i] ?? Number.NEGATIVE_INFINITY;
    const until = cuts[i + 1] ?? Number.POSITIVE_INFINITY;
    return transcript.segments
      .map((s) => ({ start: s.start + offsetSeconds, end: s.end + offsetSeconds, text: s.text }))
      .filter((s) => s.start >= from && s.start < until);
  });
  const language = heard.map((h) => h.transcript.language).find((l) => l !== null) ?? null;
  return { language, text: transcriptText(segments), segments };
}
