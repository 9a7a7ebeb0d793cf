import { z } from 'zod';
import { DomainError } from '../shared/errors.ts';
import {
  isMediaKind,
  MEDIA_KINDS,
  type MediaDeps,
  type MediaKind,
  mediaVerdict,
  removeRecording,
  type StoredMedia,
} from './media.ts';
import type { ReceivedFile } from './uploads.ts';

export type RecordingOutcome = { ok: true; media: StoredMedia } | { ok: false; problem: string; busy?: true };

/**
 * A recording that arrived (kept under `key`, `bytes` long) made ready to post: probed by the
 * server, its kind and duration from the bytes, never from the client (`asked` only tells a screen
 * recording from a camera one). A recording refused is removed from the store at once.
 */
export async function measureRecording(
  deps: MediaDeps,
  received: { key: string; bytes: number },
  asked: string | undefined,
  sender?: string,
): Promise<RecordingOutcome> {
  const probed = await deps.probe.probe(deps.store, received.key, received.bytes, sender);
  if (!probed.ok) {
    await deps.store.remove(received.key);
    return probed;
  }
  const verdict = mediaVerdict(probed.media, isMediaKind(asked) ? asked : null, deps.limits);
  if (!verdict.ok) {
    await deps.store.remove(received.key);
    return verdict;
  }
  return {
    ok: true,
    media: {
      key: received.key,
      kind: verdict.kind,
      contentType: probed.media.contentType,
      bytes: received.bytes,
      seconds: verdict.seconds,
    },
  };
}

/** What an API request says of the recording it sends (the member beside REST's multipart `recording`). */
export const ZRecordingKind = z.enum(MEDIA_KINDS).meta({
  description:
    'With a recording (the multipart body’s `recording` file): `screen` marks a recording with video as a screen ' +
    'recording. Whether it is video or audio, and how long, the server measures from the bytes.',
});

/**
 * An API request's recording (REST's multipart `recording`, already in the store) made ready for
 * `use`: measured as the reply form's are, then kept only when `use` says a row now holds it
 * (`kept()`); every refusal before that, and any error, removes it. Without one, `kind` means
 * nothing and is refused.
 */
export async function withReceivedRecording<T>(
  media: MediaDeps,
  received: ReceivedFile | undefined,
  kind: MediaKind | undefined,
  use: (recording: StoredMedia | undefined, kept: () => void) => Promise<T>,
): Promise<T> {
  if (!received) {
    if (kind !== undefined) throw new DomainError('invalid_input', 'recording_kind: only with a recording');
    return use(undefined, () => undefined);
  }
  let keep = false;
  try {
    const measured = await measureRecording(media, received, kind);
    if (!measured.ok) {
      if (measured.busy) throw new DomainError('recording_busy');
      throw new DomainError('invalid_input', `recording: ${measured.problem}`);
    }
    return await use(measured.media, () => {
      keep = true;
    });
  } finally {
    if (!keep) await removeRecording(media.store, received.key);
  }
}
