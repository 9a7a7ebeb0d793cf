import { createWriteStream } from 'node:fs';
import { type FileHandle, mkdir, open as openFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { countedBytes, endedOnce, type MediaStore } from '@convo/domain';
import { unavailableOr } from './unavailable.ts';

/*
 * Recordings in a directory (MEDIA_DIR): one file per key, written beside its final name and
 * renamed into place when every byte arrived, so a reader never sees half a file. A full disk or
 * an unwritable directory is MediaUnavailable (a 503 that says so), never a half-kept recording.
 * Readable by the server's own user only, as an export is: files 0600 in folders 0700.
 */

/** What a key may look like: the server's own `<account id>/<hex>`, or its poster's; anything else is refused. */
const KEY = /^\d{1,10}\/[0-9a-f]{32}(?:\.poster)?$/;

/** A recording being written (`<key>.part`); one a crash cut off stays behind until the sweep lists it. */
const PART = /^\d{1,10}\/[0-9a-f]{32}(?:\.poster)?\.part$/;

/** Files and folders of recordings: for the server's user alone. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * Bytes read from a file at a time when it is served. Larger chunks than Node's 64 KB default
 * serve a recording faster, at the price of that much memory per download in flight.
 */
export const READ_CHUNK = 256 * 1024;

/** A read a server that writes to its connections itself sends from the file (see `take`). */
export interface FileRead {
  path: string;
  start: number;
  end: number;
  /** The read's `ended`: called once the bytes were sent, failed, or the client went away. */
  ended: () => void;
}

export class DiskMediaStore implements MediaStore {
  readonly root: string;
  /** The reads not yet begun, by the body they answered: a Node server sends them itself. */
  private readonly reads = new WeakMap<ReadableStream<Uint8Array>, FileRead>();

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The file a key's recording is kept in, for a reader that reads the file itself (extract-audio.ts). */
  fileOf(key: string): string {
    return this.path(key);
  }

  /** A key's file; `partial`: a cut-off `<key>.part` too (the sweep removes those). */
  private path(key: string, partial = false): string {
    if (!KEY.test(key) && !(partial && PART.test(key))) throw new Error(`not a media key: ${key}`);
    return join(this.root, key);
  }

  async put(
    key: string,
    body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    maxBytes: number,
  ): Promise<{ bytes: number }> {
    const path = this.path(key);
    const part = `${path}.part`;
    const counted = countedBytes(body, maxBytes);
    try {
      await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
      await pipeline(Readable.from(counted.chunks), createWriteStream(part, { flags: 'wx', mode: FILE_MODE }));
      await rename(part, path);
      return { bytes: counted.bytes() };
    } catch (err) {
      await unlink(part).catch(() => undefined);
      throw unavailableOr(err);
    }
  }

  async size(key: string): Promise<number | null> {
    try {
      return (await stat(this.path(key))).size;
    } catch (err) {
      if (isCode(err, 'ENOENT')) return null;
      throw unavailableOr(err);
    }
  }

  /**
   * Pulled a chunk at a time, one chunk ahead of the reader: a slow client holds two chunks of
   * memory, not the file (Readable.toWeb counts each chunk as 1 against a byte-sized mark, so it
   * read a whole recording ahead of a slow socket). A Node server takes the read off the stream
   * before it begins and sends the file itself (`take`, `sendFile`).
   */
  read(key: string, start: number, end: number, ended?: () => void): ReadableStream<Uint8Array> {
    const path = this.path(key);
    const done = endedOnce(ended);
    let file: FileHandle | undefined;
    let at = start;
    const close = async () => {
      done();
      const open = file;
      file = undefined;
      await open?.close();
    };
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            file ??= await openFile(path, 'r');
            const length = Math.min(READ_CHUNK, end - at + 1);
            const chunk = new Uint8Array(length);
            const { bytesRead } = length > 0 ? await file.read(chunk, 0, length, at) : { bytesRead: 0 };
            if (bytesRead === 0) {
              await close();
              if (at <= end) controller.error(new Error(`${key} ended at byte ${at}, before ${end + 1}`));
              else controller.close();
              return;
            }
            at += bytesRead;
            controller.enqueue(bytesRead === length ? chunk : chunk.subarray(0, bytesRead));
          } catch (err) {
            await close().catch(() => undefined);
            controller.error(unavailableOr(err));
          }
        },
        cancel: close,
      },
      // Nothing is read before the first pull: a body taken off by `take` never opens the file.
      { highWaterMark: 0 },
    );
    this.reads.set(body, { path, start, end, ended: done });
    return body;
  }

  /**
   * The file behind a body `read` answered, taken off it (once, before it is read): the server
   * then sends the file itself and calls its `ended`. Null for any other body.
   */
  take(body: ReadableStream<Uint8Array>): FileRead | null {
    const read = this.reads.get(body);
    if (!read || body.locked) return null;
    this.reads.delete(body);
    return read;
  }

  /** A directory's recordings lie under the proxy's internal location as under MEDIA_DIR. */
  async handOffPath(key: string): Promise<string> {
    return relative(this.root, this.path(key));
  }

  async *list(before: Date): AsyncIterable<string> {
    const accounts = await readdir(this.root).catch((err: unknown) => {
      if (isCode(err, 'ENOENT')) return [];
      throw unavailableOr(err);
    });
    for (const account of accounts) {
      if (!/^\d{1,10}$/.test(account)) continue;
      const names = await readdir(join(this.root, account)).catch(() => []);
      for (const name of names) {
        const key = `${account}/${name}`;
        // A `.part` a day old is a recording a crash cut off: nothing refers to it, so it goes too.
        if (!KEY.test(key) && !PART.test(key)) continue;
        const written = await stat(join(this.root, key)).then(
          (s) => s.mtime,
          () => null,
        );
        if (written && written < before) yield key;
      }
    }
  }

  async remove(key: string): Promise<void> {
    await unlink(this.path(key, true)).catch((err: unknown) => {
      if (!isCode(err, 'ENOENT')) throw unavailableOr(err);
    });
  }
}

const isCode = (err: unknown, code: string) => err instanceof Error && 'code' in err && err.code === code;
