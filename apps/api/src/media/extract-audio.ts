import { openAsBlob } from 'node:fs';
import { mkdir, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AudioWindow, MediaStore, RecordingAudio, RecordingAudioOutcome } from '@convo/domain';
import {
  ALL_FORMATS,
  type AudioCodec,
  Conversion,
  CustomSource,
  EncodedAudioPacketSource,
  EncodedPacket,
  EncodedPacketSink,
  FilePathSource,
  FilePathTarget,
  FlacOutputFormat,
  Input,
  type InputAudioTrack,
  MATROSKA,
  Mp3OutputFormat,
  Mp4OutputFormat,
  OggOutputFormat,
  Output,
  type OutputFormat,
  type Source,
  WavOutputFormat,
  WEBM,
} from 'mediabunny';
import { DiskMediaStore } from './disk-store.ts';
import { readRange } from './probe.ts';
import { type ReadInto, Unreadable, webmAudioBlocks } from './webm-audio.ts';

/*
 * A recording's audio alone, for a speech engine (issue 43): its audio track copied packet by
 * packet into a file of its own (mediabunny's Conversion with the video discarded and copying
 * forced: nothing is decoded), Opus and Vorbis into Ogg, AAC into M4A, MP3, FLAC and PCM as they
 * are. The recording is read in ranges through a bounded cache and the audio written to a file,
 * so a recording of any size costs the cache, not its size. A WebM has its audio blocks read out
 * of it through one reused buffer instead (webm-audio.ts; from a file of the disk store, straight
 * into that buffer): the demuxer would pass every byte of its video through buffers of its own.
 * Audio still over the engine's limit is cut into fixed windows that overlap, each its own file,
 * whose segments are joined after.
 */

/** Bytes the demuxer may keep cached while reading one recording. */
const CACHE_BYTES = 4 * 1024 * 1024;

/** Bytes of audio held before each write to its file. */
const WRITE_CHUNK_BYTES = 1024 * 1024;

/** Seconds each window shares with the next, so no word is cut in two without being heard whole. */
export const WINDOW_OVERLAP_SECONDS = 2;

/** One file of audio for the engine, and where in the recording it starts. */
export interface AudioPiece {
  path: string;
  /** The file's name as the engine is told it (its extension names its format). */
  name: string;
  type: string;
  /** Where the piece starts in the recording, in seconds. */
  offsetSeconds: number;
  /** Seconds it shares with the piece before it. */
  overlapSeconds: number;
}

/** What came of reading a recording's audio. */
export type ExtractedAudio =
  | { ok: true; pieces: AudioPiece[] }
  | { ok: false; noAudio: true }
  | { ok: false; noAudio: false; reason: string };

/** The container each codec is copied into, as the engines take them. */
function containerFor(codec: AudioCodec): { format: () => OutputFormat; extension: string; type: string } | null {
  if (codec === 'opus' || codec === 'vorbis')
    return { format: () => new OggOutputFormat(), extension: 'ogg', type: 'audio/ogg' };
  if (codec === 'aac') return { format: () => new Mp4OutputFormat(), extension: 'm4a', type: 'audio/mp4' };
  if (codec === 'mp3') return { format: () => new Mp3OutputFormat(), extension: 'mp3', type: 'audio/mpeg' };
  if (codec === 'flac') return { format: () => new FlacOutputFormat(), extension: 'flac', type: 'audio/flac' };
  if (codec.startsWith('pcm-') || codec === 'ulaw' || codec === 'alaw') {
    return { format: () => new WavOutputFormat(), extension: 'wav', type: 'audio/wav' };
  }
  return null;
}

/**
 * The audio of the recording `read` gives (`size` bytes, `read(start, end)` as mediabunny asks),
 * written under `dir` as `<stem>.<ext>`, or as windows `<stem>-<n>.<ext>` when it is over
 * `maxBytes`; a WebM's audio blocks are read with `readInto` (by default through `read`). The
 * caller removes the pieces (removePieces) once the engine has them.
 */
export async function extractAudio(
  size: number,
  read: (start: number, end: number) => Promise<Uint8Array>,
  dir: string,
  stem: string,
  maxBytes: number,
  readInto: ReadInto = async (into, position) => {
    const bytes = await read(position, Math.min(size, position + into.length));
    into.set(bytes);
    return bytes.length;
  },
): Promise<ExtractedAudio> {
  const source = new CustomSource({
    getSize: () => size,
    read,
    maxCacheSize: CACHE_BYTES,
    prefetchProfile: 'fileSystem',
  });
  const input = new Input({ formats: ALL_FORMATS, source });
  const whole = join(dir, stem);
  const written: string[] = [];
  try {
    const track = await input.getPrimaryAudioTrack().catch(() => null);
    if (!track) return (await input.canRead().catch(() => false)) ? { ok: false, noAudio: true } : unreadable;
    const codec = track.codec;
    const container = codec ? containerFor(codec) : null;
    if (!container)
      return {
        ok: false,
        noAudio: false,
        reason: `its audio (${codec ?? 'an unknown codec'}) cannot be sent to the engine`,
      };
    const path = `${whole}.${container.extension}`;
    written.push(path);
    const webm = [WEBM, MATROSKA].includes(await input.getFormat());
    if (!(webm && (await copyWebmAudio(readInto, size, track, path, container.format())))) {
      await copyAudio(input, path, container.format());
    }
    const bytes = (await stat(path)).size;
    if (bytes <= maxBytes)
      return {
        ok: true,
        pieces: [
          { path, name: `audio.${container.extension}`, type: container.type, offsetSeconds: 0, overlapSeconds: 0 },
        ],
      };
    // Over the limit: windows of the audio file just written, each small enough with a margin.
    const pieces = await cutIntoWindows(path, bytes, maxBytes, whole, container, written);
    await rm(path, { force: true });
    return { ok: true, pieces };
  } catch (err) {
    await Promise.all(written.map((w) => rm(w, { force: true })));
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, noAudio: false, reason: `its audio could not be read (${why})` };
  } finally {
    input.dispose();
  }
}

const unreadable: ExtractedAudio = { ok: false, noAudio: false, reason: 'it is not a recording the server can read' };

/** Copies the primary audio track of `input` into `path`. */
async function copyAudio(input: Input, path: string, format: OutputFormat) {
  const output = new Output({ format, target: fileTarget(path) });
  const conversion = await Conversion.init({
    input,
    output,
    tracks: 'primary',
    video: { discard: true },
    copy: { mode: 'forced' },
    showWarnings: false,
  });
  if (!conversion.isValid) {
    await output.cancel();
    throw new Error(conversion.discardedTracks.map((t) => t.reason).join(', ') || 'nothing to copy');
  }
  await conversion.execute();
}

/**
 * Copies the audio blocks of `track` out of the WebM `readInto` reads into `path` (webm-audio.ts);
 * false, with nothing left at `path`, when that reader does not read this file.
 */
async function copyWebmAudio(
  readInto: ReadInto,
  size: number,
  track: InputAudioTrack,
  path: string,
  format: OutputFormat,
): Promise<boolean> {
  const codec = track.codec;
  if (!codec) return false;
  const output = new Output({ format, target: fileTarget(path) });
  const audio = new EncodedAudioPacketSource(codec);
  output.addAudioTrack(audio);
  try {
    await output.start();
    let meta: { decoderConfig?: AudioDecoderConfig } | undefined = {
      decoderConfig: (await track.getDecoderConfig()) ?? undefined,
    };
    // Each block is added once the next one says how long it lasts.
    let held: { timestamp: number; data: Uint8Array } | undefined;
    let duration = 0;
    for await (const block of webmAudioBlocks(readInto, size, track.id)) {
      if (held) {
        duration = block.timestamp - held.timestamp;
        await audio.add(new EncodedPacket(held.data, 'key', held.timestamp, duration), meta);
        meta = undefined;
      }
      held = block;
    }
    if (!held) throw new Unreadable('no audio blocks');
    await audio.add(new EncodedPacket(held.data, 'key', held.timestamp, duration), meta);
    await output.finalize();
    return true;
  } catch (err) {
    await output.cancel().catch(() => undefined);
    await rm(path, { force: true });
    if (err instanceof Unreadable) return false;
    throw err;
  }
}

/** Written a megabyte at a time (mediabunny's default holds 16 MB before each write). */
const fileTarget = (path: string) => new FilePathTarget(path, { chunked: true, chunkSize: WRITE_CHUNK_BYTES });

/**
 * The audio file at `path` cut into overlapping windows, each under `maxBytes` with a tenth to
 * spare: its packets copied as they are (a conversion cannot trim without decoding), each window
 * from the packet that starts at or before its start, its times moved to begin at 0.
 */
async function cutIntoWindows(
  path: string,
  bytes: number,
  maxBytes: number,
  stem: string,
  container: { format: () => OutputFormat; extension: string; type: string },
  written: string[],
): Promise<AudioPiece[]> {
  const input = new Input({ formats: ALL_FORMATS, source: fileSource(path) });
  try {
    const track = await input.getPrimaryAudioTrack();
    if (!track?.codec) throw new Error('its audio track went missing');
    const codec = track.codec;
    const seconds = await input.computeDuration();
    const window = Math.max(WINDOW_OVERLAP_SECONDS * 2, Math.floor(((maxBytes * 0.9) / bytes) * seconds));
    const decoderConfig = (await track.getDecoderConfig()) ?? undefined;
    const sink = new EncodedPacketSink(track);
    const pieces: AudioPiece[] = [];
    for (let start = 0, n = 0; start < seconds; start += window - WINDOW_OVERLAP_SECONDS, n++) {
      const first = (await sink.getPacket(start)) ?? (await sink.getFirstPacket());
      if (!first) break;
      const piece = `${stem}-${n}.${container.extension}`;
      written.push(piece);
      const output = new Output({ format: container.format(), target: fileTarget(piece) });
      const audio = new EncodedAudioPacketSource(codec);
      output.addAudioTrack(audio);
      await output.start();
      const offset = first.timestamp;
      let meta: { decoderConfig?: AudioDecoderConfig } | undefined = { decoderConfig };
      for await (const packet of sink.packets(first)) {
        if (packet.timestamp >= start + window) break;
        await audio.add(packet.clone({ timestamp: packet.timestamp - offset }), meta);
        meta = undefined;
      }
      await output.finalize();
      pieces.push({
        path: piece,
        name: `audio-${n}.${container.extension}`,
        type: container.type,
        offsetSeconds: offset,
        overlapSeconds: n === 0 ? 0 : WINDOW_OVERLAP_SECONDS,
      });
      if (start + window >= seconds) break;
    }
    return pieces;
  } finally {
    input.dispose();
  }
}

const fileSource = (path: string): Source => new FilePathSource(path, { maxCacheSize: CACHE_BYTES });

/** Removes the pieces' files (after the engine has them, or when it could not be asked). */
export async function removePieces(pieces: readonly AudioPiece[]): Promise<void> {
  await Promise.all(pieces.map((p) => rm(p.path, { force: true })));
}

export interface RecordingAudioOptions {
  store: MediaStore;
  /** Where the audio files are written while the engine takes them (TRANSCRIBE_DIR; the system's temp). */
  dir: string;
  /** The most one file sent to the engine may weigh (TRANSCRIBE_MAX_BYTES: OpenAI's 25 MB, less a margin). */
  maxBytes: number;
}

/** Recordings' audio from the media store, for the transcript job (the domain's RecordingAudio). */
export function recordingAudio(options: RecordingAudioOptions): RecordingAudio {
  let made: Promise<unknown> | undefined;
  return {
    async audioOf(mediaKey) {
      const nothing = { release: async () => {} };
      const size = await options.store.size(mediaKey);
      if (size === null) {
        return {
          ...nothing,
          outcome: { ok: false, noAudio: false, reason: 'the recording is no longer kept', retryable: false },
        };
      }
      made ??= mkdir(options.dir, { recursive: true });
      await made;
      const read = (start: number, end: number) => readRange(options.store.read(mediaKey, start, end - 1), end - start);
      const stem = `transcript-${mediaKey.replace(/[^A-Za-z0-9]/g, '-')}-${Date.now().toString(36)}`;
      // A file of the disk store is read straight into the reader's buffer: nothing allocated a read.
      const file =
        options.store instanceof DiskMediaStore
          ? await open(options.store.fileOf(mediaKey), 'r').catch(() => null)
          : null;
      const readInto: ReadInto | undefined = file
        ? async (into, position) => (await file.read(into, 0, into.length, position)).bytesRead
        : undefined;
      const extracted = await extractAudio(size, read, options.dir, stem, options.maxBytes, readInto).finally(() =>
        file?.close(),
      );
      if (!extracted.ok) {
        const outcome: RecordingAudioOutcome = extracted.noAudio
          ? { ok: false, noAudio: true }
          : { ok: false, noAudio: false, reason: extracted.reason, retryable: false };
        return { ...nothing, outcome };
      }
      const { pieces } = extracted;
      const windows: AudioWindow[] = await Promise.all(
        pieces.map(async (p) => ({
          file: await openAsBlob(p.path, { type: p.type }),
          name: p.name,
          offsetSeconds: p.offsetSeconds,
          overlapSeconds: p.overlapSeconds,
        })),
      );
      return { outcome: { ok: true, windows }, release: () => removePieces(pieces) };
    },
  };
}
