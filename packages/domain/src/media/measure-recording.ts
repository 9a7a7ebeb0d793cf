import { isMediaKind, type MediaDeps, mediaVerdict, type StoredMedia } from './media.ts';

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
