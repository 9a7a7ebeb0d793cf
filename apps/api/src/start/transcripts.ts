import type { Services } from '../http/services.ts';
import type { Logger } from '../logger.ts';
import { recordingAudio } from '../media/extract-audio.ts';
import { openAiTranscriber } from '../media/openai-transcriber.ts';
import type { QueueWorker } from '../workers/queue-worker.ts';
import { startTranscriptWorker } from '../workers/transcripts.ts';
import type { TranscribeSettings } from './config.ts';

/**
 * The transcripts' worker on the configured engine (TRANSCRIBE_*). Imported by the server only
 * when TRANSCRIBE_URL is set, so its media libraries load only there.
 */
export function startTranscripts(settings: TranscribeSettings, services: Services, logger: Logger): QueueWorker {
  return startTranscriptWorker(services.transcripts, {
    transcriber: openAiTranscriber(settings),
    audio: recordingAudio({ store: services.media.store, dir: settings.dir, maxBytes: settings.maxBytes }),
    logger,
    timeoutMs: settings.timeoutMs,
    retryScale: settings.retryScale,
    onError: () => services.metrics.backgroundError('transcripts'),
    busy: services.databaseBusy,
  });
}
