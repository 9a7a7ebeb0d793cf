/*
 * The audio blocks of a WebM (Matroska) recording, read without its video (issue 43). A
 * recorder's WebM interleaves a few kilobytes of audio with megabytes of video in every cluster;
 * mediabunny's demuxer loads each cluster whole, and every byte read that way passes through an
 * ArrayBuffer of its own that V8 frees only when its external-memory heuristic calls a collection
 * (bench/README: +4 to +103 MB for the same extraction). Here the file is read into one buffer,
 * used again for every read (from a file here, straight into it), and only the audio track's
 * blocks are copied out of it: the element headers are walked, the video's payloads stepped over.
 *
 * Only what recorders write is read: SimpleBlocks and BlockGroups without lacing, a track without
 * content encodings, in order. Anything else is `Unreadable` (the caller reads the file with
 * mediabunny's demuxer instead), never a guess.
 */

/** Reads a recording's bytes at `position` into `into`, as many as fit or remain: how many it read. */
export type ReadInto = (into: Uint8Array, position: number) => Promise<number>;

/** Why this reader stepped back: the file holds something it does not read. */
export class Unreadable extends Error {}

/** One audio block: its time in seconds and its bytes (a copy of its own). */
export interface AudioBlock {
  timestamp: number;
  data: Uint8Array;
}

/** Bytes read from the file at a time, into the one buffer every read reuses. */
const WINDOW_BYTES = 1024 * 1024;

const ID = {
  EBML: 0x1a45dfa3,
  Segment: 0x18538067,
  SeekHead: 0x114d9b74,
  Info: 0x1549a966,
  TimecodeScale: 0x2ad7b1,
  Tracks: 0x1654ae6b,
  TrackEntry: 0xae,
  TrackNumber: 0xd7,
  ContentEncodings: 0x6d80,
  Cluster: 0x1f43b675,
  Timecode: 0xe7,
  SimpleBlock: 0xa3,
  BlockGroup: 0xa0,
  Block: 0xa1,
  Cues: 0x1c53bb6b,
  Tags: 0x1254c367,
  Chapters: 0x1043a770,
  Attachments: 0x1941a469,
} as const;

/** The Segment's children: one of these ends a Cluster whose size the recorder left unknown. */
const TOP_LEVEL = new Set<number>([
  ID.SeekHead,
  ID.Info,
  ID.Tracks,
  ID.Cluster,
  ID.Cues,
  ID.Tags,
  ID.Chapters,
  ID.Attachments,
  ID.Segment,
  ID.EBML,
]);

interface Element {
  id: number;
  /** Where its header starts. */
  start: number;
  /** Where its data starts. */
  data: number;
  /** Where its data ends: its size, or `limit` when the size is unknown. */
  end: number;
  unknownSize: boolean;
}

/** A recording read through one reused buffer. */
class Window {
  readonly #read: ReadInto;
  readonly #size: number;
  readonly #bytes = new Uint8Array(WINDOW_BYTES);
  #start = 0;
  #length = 0;

  constructor(read: ReadInto, size: number) {
    this.#read = read;
    this.#size = size;
  }

  /** `n` bytes at `at`, as a view that holds until the next call; fewer at the file's end. */
  async bytes(at: number, n: number): Promise<Uint8Array> {
    if (n > WINDOW_BYTES) throw new Unreadable(`an element of ${n} bytes`);
    if (at < this.#start || at + n > this.#start + this.#length) {
      const want = Math.min(WINDOW_BYTES, this.#size - at);
      this.#start = at;
      this.#length = want > 0 ? await this.#read(this.#bytes.subarray(0, want), at) : 0;
    }
    const from = at - this.#start;
    return this.#bytes.subarray(from, Math.min(from + n, this.#length));
  }
}

/** An EBML variable-length integer at `bytes[at]`: its length and value (`marker` kept for ids). */
function vint(bytes: Uint8Array, at: number, marker: boolean): { length: number; value: number; allOnes: boolean } {
  const first = bytes[at];
  if (first === undefined || first === 0) throw new Unreadable('a malformed element');
  const length = Math.clz32(first) - 23;
  if (at + length > bytes.length) throw new Unreadable('an element cut off');
  let value = marker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const b = bytes[at + i] as number;
    value = value * 256 + b;
    allOnes &&= b === 0xff;
  }
  return { length, value, allOnes };
}

/** The element whose header starts at `at`, within `limit` (its parent's end); null at the end. */
async function element(window: Window, at: number, limit: number): Promise<Element | null> {
  if (at >= limit) return null;
  const head = await window.bytes(at, Math.min(12, limit - at));
  if (head.length < 2) return null;
  const id = vint(head, 0, true);
  if (id.length > 4) throw new Unreadable('a malformed element id');
  const size = vint(head, id.length, false);
  const data = at + id.length + size.length;
  const unknownSize = size.allOnes;
  const end = unknownSize ? limit : data + size.value;
  if (end > limit) throw new Unreadable('an element past its parent');
  return { id: id.value, start: at, data, end, unknownSize };
}

/** An unsigned integer element's value (at most 8 bytes, as EBML has them). */
async function unsignedOf(window: Window, e: Element): Promise<number> {
  if (e.end - e.data > 8) throw new Unreadable('an integer of more than 8 bytes');
  const bytes = await window.bytes(e.data, e.end - e.data);
  let value = 0;
  for (const b of bytes) value = value * 256 + b;
  return value;
}

/**
 * The blocks of track `track` of the WebM that `read` reads (`size` bytes), in file order, copied
 * out; `Unreadable` for a file this reader does not read (see above).
 */
export async function* webmAudioBlocks(read: ReadInto, size: number, track: number): AsyncGenerator<AudioBlock> {
  const window = new Window(read, size);
  let at = 0;
  let segment: Element | null = null;
  for (let e = await element(window, at, size); e; e = await element(window, at, size)) {
    if (e.id === ID.Segment) {
      segment = e;
      break;
    }
    at = e.end;
  }
  if (!segment) throw new Unreadable('no segment');
  let scale = 1_000_000;
  let checkedTrack = false;
  let last = Number.NEGATIVE_INFINITY;
  at = segment.data;
  for (let e = await element(window, at, segment.end); e; e = await element(window, at, segment.end)) {
    if (e.id === ID.Info) {
      if (e.unknownSize) throw new Unreadable('an info of unknown size');
      for (let c = await element(window, e.data, e.end); c; c = await element(window, c.end, e.end)) {
        if (c.id === ID.TimecodeScale) scale = await unsignedOf(window, c);
      }
      if (scale === 0) throw new Unreadable('a timestamp scale of 0');
    } else if (e.id === ID.Tracks) {
      if (e.unknownSize) throw new Unreadable('tracks of unknown size');
      checkedTrack = await trackIsPlain(window, e, track);
    } else if (e.id === ID.Cluster) {
      if (!checkedTrack) throw new Unreadable('a cluster before the track it holds');
      let timecode = 0;
      let c = await element(window, e.data, e.end);
      while (c && !(e.unknownSize && TOP_LEVEL.has(c.id))) {
        if (c.unknownSize) throw new Unreadable('a block of unknown size');
        if (c.id === ID.Timecode) timecode = await unsignedOf(window, c);
        else if (c.id === ID.SimpleBlock || c.id === ID.BlockGroup) {
          const block = c.id === ID.SimpleBlock ? c : await blockIn(window, c);
          const found = block && (await audioOf(window, block, track));
          if (found) {
            const timestamp = ((timecode + found.relative) * scale) / 1e9;
            if (timestamp < last) throw new Unreadable('audio blocks out of order');
            last = timestamp;
            yield { timestamp, data: found.data };
          }
        }
        c = await element(window, c.end, e.end);
      }
      // A cluster of unknown size ends where the next top-level element begins.
      at = c ? c.start : e.end;
      continue;
    }
    at = e.end;
  }
}

/** Whether track `track` is in `tracks` without content encodings (compressed or encrypted blocks). */
async function trackIsPlain(window: Window, tracks: Element, track: number): Promise<boolean> {
  for (let t = await element(window, tracks.data, tracks.end); t; t = await element(window, t.end, tracks.end)) {
    if (t.id !== ID.TrackEntry) continue;
    let number = -1;
    let encoded = false;
    for (let c = await element(window, t.data, t.end); c; c = await element(window, c.end, t.end)) {
      if (c.id === ID.TrackNumber) number = await unsignedOf(window, c);
      else if (c.id === ID.ContentEncodings) encoded = true;
    }
    if (number === track) {
      if (encoded) throw new Unreadable('an audio track with content encodings');
      return true;
    }
  }
  throw new Unreadable(`no track ${track}`);
}

/** The Block of a BlockGroup. */
async function blockIn(window: Window, group: Element): Promise<Element | null> {
  for (let c = await element(window, group.data, group.end); c; c = await element(window, c.end, group.end)) {
    if (c.id === ID.Block) return c;
  }
  return null;
}

/** The block's time (relative to its cluster's) and a copy of its bytes, when it is `track`'s. */
async function audioOf(
  window: Window,
  block: Element,
  track: number,
): Promise<{ relative: number; data: Uint8Array } | null> {
  const head = await window.bytes(block.data, Math.min(12, block.end - block.data));
  const number = vint(head, 0, false);
  if (number.value !== track) return null;
  if (head.length < number.length + 3) throw new Unreadable('a block cut off');
  const at = number.length;
  const relative = (((head[at] as number) << 24) >> 16) | (head[at + 1] as number);
  const flags = head[at + 2] as number;
  if ((flags & 0x06) !== 0) throw new Unreadable('laced blocks');
  const from = block.data + at + 3;
  const bytes = await window.bytes(from, block.end - from);
  if (bytes.length !== block.end - from) throw new Unreadable('a block cut off');
  return { relative, data: bytes.slice() };
}
