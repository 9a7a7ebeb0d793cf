import {
  type RecordingAudio,
  type Transcriber,
  type TranscriptJobStore,
  transcribeRecording,
  transcribeRetryDelaySeconds,
} from '@convo/domain';
import type { Logger } from '../logger.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';

/*
 * Transcribes recordings (the domain's transcripts/): every replica runs one worker when a speech
 * engine is configured; each takes one due recording at a time (SKIP LOCKED), extracts its audio
 * to a file without decoding (media/extract-audio.ts), sends it to the engine and keeps what came
 * of it. An engine that is down, busy or slow is tried again on the domain's schedule (times
 * TRANSCRIBE_RETRY_SCALE); a recording it cannot transcribe is failed with the reason.
 */

export interface TranscriptWorkerOptions {
  transcriber: Transcriber;
  audio: RecordingAudio;
  logger: Logger;
  /** How long the engine may take for one file: a try holds its recording for a few of these. */
  timeoutMs: number;
  /** Multiplies the retry schedule (TRANSCRIBE_RETRY_SCALE). */
  retryScale?: number;
  /** How often to look for due recordings (default 2 s). */
  intervalMs?: number;
  onError?: () => void;
  busy?: () => Promise<boolean>;
}

export function startTranscriptWorker(store: TranscriptJobStore, options: TranscriptWorkerOptions): QueueWorker {
  const scale = options.retryScale ?? 1;
  const retryDelay = (attempts: number) => {
    const seconds = transcribeRetryDelaySeconds(attempts);
    return seconds === null ? null : seconds * scale;
  };
  // A try holds its recording from other replicas: its audio's extraction and a few of the
  // engine's answers (a long recording goes in windows), then it is handed on.
  const leaseSeconds = Math.ceil((4 * options.timeoutMs) / 1000) + 60;
  return startQueueWorker({
    name: 'the transcripts',
    logger: options.logger,
    intervalMs: options.intervalMs ?? 2_000,
    onError: options.onError,
    busy: options.busy,
    maxYieldMs: 1_000,
    async step() {
      const [due] = await store.claim(1, leaseSeconds);
      if (!due) return false;
      const started = performance.now();
      const outcome = await transcribeRecording({ ...options, retryDelay }, due).catch((err: unknown) => {
        // Not the engine's answer (the store, the file system): logged, and tried again.
        options.logger.error({ err, mediaKey: due.mediaKey }, 'a transcript could not be made');
        const inSeconds = retryDelay(due.attempts);
        const reason = 'the server could not read the recording';
        return inSeconds === null ? { kind: 'failed' as const, reason } : { kind: 'retry' as const, reason, inSeconds };
      });
      await store.settle(due, outcome);
      options.logger.info(
        {
          mediaKey: due.mediaKey,
          attempt: due.attempts,
          outcome: outcome.kind,
          ...(outcome.kind === 'retry' || outcome.kind === 'failed' ? { reason: outcome.reason } : {}),
          ms: Math.round(performance.now() - started),
        },
        'transcript',
      );
      return true;
    },
  });
}
