/*
 * Recorded messages: what a message's kind may be, what the server accepts as a recording, and
 * the ports that keep the bytes (a directory, or object storage shared by every replica) and
 * measure them. The duration shown is always the one the server measured, never the client's.
 */

/** The kinds a recording may be sent as; `screen` is a video track recorded from a screen. */
export const MEDIA_KINDS = ['video', 'screen', 'audio'] as const;

export type MediaKind = (typeof MEDIA_KINDS)[number];

export const isMediaKind = (value: unknown): value is MediaKind => MEDIA_KINDS.some((k) => k === value);

export interface MediaLimits {
  /** The longest recording accepted, in seconds (`MEDIA_MAX_SECONDS`). */
  maxSeconds: number;
  /** The largest file accepted, in bytes (`MEDIA_MAX_BYTES`), enforced while the bytes arrive. */
  maxBytes: number;
}

export const DEFAULT_MEDIA_LIMITS: MediaLimits = { maxSeconds: 600, maxBytes: 500 * 1024 * 1024 };

/** What the probe found in the bytes. */
export interface ProbedMedia {
  /** The container's MIME type without its parameters (`video/webm`, `audio/ogg` …). */
  contentType: string;
  /** True when there is a video track. */
  hasVideo: boolean;
  /** The measured duration, in seconds (fractional). */
  seconds: number;
}

/** `busy`: not measured, for the server measures too many others now; send it again later. */
export type ProbeOutcome = { ok: true; media: ProbedMedia } | { ok: false; problem: string; busy?: true };

/** A recording kept in the media store, measured, ready to become a message. */
export interface StoredMedia {
  key: string;
  kind: MediaKind;
  contentType: string;
  bytes: number;
  /** `recorded_duration_seconds`: the measured duration, rounded, at least 1. */
  seconds: number;
  /** A poster image is kept beside it (under posterKey(key)). */
  poster?: boolean | undefined;
}

/*
 * A recording's poster: a still the recorder makes in the browser from the recording's first
 * second, shown by the player until it plays and in mails. It is kept beside the recording, under
 * its key with a suffix, so whatever holds the recording (a message, a repost, a reply waiting for
 * its link) holds its poster, and removing or sweeping the one takes the other.
 */

export const POSTER_SUFFIX = '.poster';

/** Where a recording's poster is kept. */
export const posterKey = (key: string): string => `${key}${POSTER_SUFFIX}`;

/** The recording a kept key belongs to: itself, or the recording whose poster it is. */
export const recordingKeyOf = (key: string): string =>
  key.endsWith(POSTER_SUFFIX) ? key.slice(0, -POSTER_SUFFIX.length) : key;

/**
 * A poster is at most this large: a still 480 pixels wide is some 15 to 30 KB, and its data URL
 * must fit a form field (MAX_BODY_BYTES, 64 KB by default) with room to spare.
 */
export const MAX_POSTER_BYTES = 44 * 1024;

/**
 * The poster a form sent (`data:image/jpeg;base64,…`), checked by its bytes: a JPEG image within
 * MAX_POSTER_BYTES. Answers its bytes, or why not.
 */
export function posterFromForm(value: string): { bytes: Uint8Array } | { problem: string } {
  const match = /^data:image\/jpeg;base64,([A-Za-z0-9+/]+={0,2})$/.exec(value.trim());
  const refused = { problem: 'The recording’s poster is not a JPEG image: record it again.' };
  if (!match?.[1] || (match[1].length * 3) / 4 > MAX_POSTER_BYTES + 3) return refused;
  const binary = atob(match[1]);
  const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  // A JPEG begins with its start-of-image marker and ends with its end-of-image marker.
  const jpeg =
    bytes.length > 4 &&
    bytes[0] === 0xff &&
    bytes[1] === 0xd8 &&
    bytes[2] === 0xff &&
    bytes[bytes.length - 2] === 0xff &&
    bytes[bytes.length - 1] === 0xd9;
  return jpeg && bytes.length <= MAX_POSTER_BYTES ? { bytes } : refused;
}

/**
 * Keeps a video's or a screen recording's poster beside it; the recording says so. A poster that
 * cannot be kept (the store is down) is left out: the recording goes on without one.
 */
export async function keepPoster(
  deps: { store: MediaStore },
  media: StoredMedia,
  poster: Uint8Array | null | undefined,
): Promise<StoredMedia> {
  if (!poster || media.kind === 'audio') return media;
  try {
    await deps.store.put(posterKey(media.key), [poster], MAX_POSTER_BYTES);
    return { ...media, poster: true };
  } catch {
    return media;
  }
}

/** Forgets a recording and its poster. */
export async function removeRecording(store: MediaStore, key: string): Promise<void> {
  await store.remove(key);
  await store.remove(posterKey(key));
}

/**
 * The containers a recording may come in (what browsers record, and the common audio files), and
 * the file name extension a download of each is offered with.
 */
export const MEDIA_EXTENSIONS: Readonly<Record<string, string>> = {
  'video/webm': 'webm',
  'audio/webm': 'webm',
  'video/x-matroska': 'mkv',
  'video/mp4': 'mp4',
  'audio/mp4': 'm4a',
  'video/quicktime': 'mov',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
};

/** A MIME type as compared: lower case, without its `;codecs=` (or any other) parameters. */
export const bareMimeType = (type: string): string => type.split(';')[0]?.trim().toLowerCase() ?? '';

/** `recorded_duration_seconds` of a measured duration: rounded to the nearest second, at least 1. */
export const recordedSeconds = (seconds: number): number => Math.max(1, Math.round(seconds));

/**
 * Whether the probe's finding may be posted as `kind` (what the visitor said they recorded): the
 * container allowed, a video track for video and screen, a duration within the limit. Returns the
 * message kind to post (audio-only bytes are audio, whatever was asked), or why not.
 */
export function mediaVerdict(
  found: ProbedMedia,
  asked: MediaKind | null,
  limits: MediaLimits,
): { ok: true; kind: MediaKind; seconds: number } | { ok: false; problem: string } {
  if (!Object.hasOwn(MEDIA_EXTENSIONS, found.contentType)) {
    return { ok: false, problem: 'That file is not a recording this site accepts (WebM, MP4, Ogg, MP3, M4A or WAV).' };
  }
  if (!(found.seconds > 0.05)) return { ok: false, problem: 'That recording is empty.' };
  if (found.seconds > limits.maxSeconds + 0.5) {
    return { ok: false, problem: `A recording is at most ${durationLimitText(limits.maxSeconds)} long.` };
  }
  const kind: MediaKind = !found.hasVideo ? 'audio' : asked === 'screen' ? 'screen' : 'video';
  return { ok: true, kind, seconds: recordedSeconds(found.seconds) };
}

/** A limit in seconds as a person reads it: "10 minutes", "90 seconds". */
export const durationLimitText = (seconds: number): string =>
  seconds % 60 === 0
    ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}`
    : `${seconds} second${seconds === 1 ? '' : 's'}`;

/** The bytes of a recording could not be kept: more than the limit arrived. */
export class MediaTooLarge extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`A recording is at most ${Math.floor(maxBytes / (1024 * 1024))} MB.`);
    this.maxBytes = maxBytes;
  }
}

/**
 * The chunks of `body` as a store keeps them, counted: reading throws MediaTooLarge as soon as
 * more than `maxBytes` have passed; `bytes()` is how many passed.
 */
export function countedBytes(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number) {
  let bytes = 0;
  async function* chunks() {
    for await (const chunk of body) {
      bytes += chunk.byteLength;
      if (bytes > maxBytes) throw new MediaTooLarge(maxBytes);
      yield chunk;
    }
  }
  return { chunks: chunks(), bytes: () => bytes };
}

/** The media store cannot take or give bytes now (disk full, object storage down): answered 503. */
export class MediaUnavailable extends Error {}

/**
 * Where recordings are kept. Keys are the server's own (`<account id>/<random>`), never a
 * client's; a key that is gone reads as null.
 */
export interface MediaStore {
  /**
   * Keeps the bytes under `key`; past `maxBytes` it stops reading, keeps nothing and throws
   * MediaTooLarge. Either all the bytes are kept or none.
   */
  put(
    key: string,
    body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    maxBytes: number,
  ): Promise<{ bytes: number }>;
  /** The size of what is kept under `key`, or null. */
  size(key: string): Promise<number | null>;
  /**
   * Bytes `start` to `end` (inclusive) of what is kept under `key`; `ended` is called once when
   * they were all read, when reading failed, or when the reader let go of them.
   */
  read(key: string, start: number, end: number, ended?: () => void): ReadableStream<Uint8Array>;
  /** Forgets `key` (nothing when it is already gone). */
  remove(key: string): Promise<void>;
  /** The keys of everything kept that was written before `before`, in no particular order. */
  list(before: Date): AsyncIterable<string>;
  /**
   * A short-lived link straight to the bytes, answered with this type and disposition, for a
   * store that hands reads to its own servers (object storage); absent where the server streams.
   */
  link?(key: string, as: MediaLink): Promise<string>;
  /**
   * Where a front proxy that serves recordings itself (nginx's `X-Accel-Redirect`) finds these
   * bytes, under its internal location for them: a directory's key as it lies there; object
   * storage's presigned path and query (path-style: `<bucket>/<key>?X-Amz-…`).
   */
  handOffPath(key: string): Promise<string>;
}

/** `ended` as a store calls it: at most once, whichever way a read ends first. */
export function endedOnce(ended?: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    ended?.();
  };
}

/** How a linked recording is answered: its type, and inline or as a download with its name. */
export interface MediaLink {
  contentType: string;
  disposition: string;
}

/** Which recordings are still wanted: by a message, or by a reply waiting for its mailed link. */
export interface MediaReferences {
  referenced(keys: readonly string[]): Promise<Set<string>>;
}

/** How long a recording nothing refers to is kept (an upload not yet posted is one of them). */
export const UNREFERENCED_MEDIA_HOURS = 24;

/**
 * Removes what the store keeps that nothing wants any more and that is older than the grace: a
 * reply's recording whose mailed link expired unconfirmed, a message's gone with its
 * conversation, an upload never posted. Checked in batches; answers how many were removed.
 */
export async function sweepRecordings(
  deps: { store: MediaStore; references: MediaReferences },
  now = new Date(),
): Promise<number> {
  const before = new Date(now.getTime() - UNREFERENCED_MEDIA_HOURS * 3600_000);
  let removed = 0;
  let batch: string[] = [];
  const check = async () => {
    // A poster is wanted as long as its recording is.
    const wanted = await deps.references.referenced([...new Set(batch.map(recordingKeyOf))]);
    for (const key of batch) {
      if (wanted.has(recordingKeyOf(key))) continue;
      await deps.store.remove(key);
      removed += 1;
    }
    batch = [];
  };
  for await (const key of deps.store.list(before)) {
    batch.push(key);
    if (batch.length >= 500) await check();
  }
  if (batch.length > 0) await check();
  return removed;
}

/** Measures what a store keeps under a key: container, tracks, duration. */
export interface MediaProbe {
  /** `sender`: whose the recording is (a client address), so one sender's files wait behind each other, not others'. */
  probe(store: MediaStore, key: string, size: number, sender?: string): Promise<ProbeOutcome>;
}

/** Everything the site needs to take and serve recordings. */
export interface MediaDeps {
  store: MediaStore;
  probe: MediaProbe;
  limits: MediaLimits;
}

/** A new key for a recording of `accountId`: its account's folder, 128 random bits. */
export function newMediaKey(accountId: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${accountId}/${hex}`;
}
