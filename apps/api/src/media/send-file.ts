import { open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { type FileRead, READ_CHUNK } from './disk-store.ts';

/*
 * A recording sent from its file straight to the connection, on Node. Through a web stream every
 * chunk was a new buffer, handed on and left to the collector, which frees them in batches: 32
 * downloads at once held some 100 MB more than idle. Here each download reads into two buffers
 * of its own in turn (one being written while the next is read), and a buffer is read into again
 * only once the connection has taken what it held; buffers are kept for the next downloads.
 */

/** Buffers kept between downloads: enough for the downloads of a busy moment, never more. */
const KEPT_BUFFERS = 64;
const spare: Buffer[] = [];

const buffer = () => spare.pop() ?? Buffer.allocUnsafeSlow(READ_CHUNK);
const giveBack = (b: Buffer) => {
  if (spare.length < KEPT_BUFFERS) spare.push(b);
};

/**
 * Sends bytes `file.start` to `file.end` to `out`, whose head is written, then ends it; calls
 * `taken` each time the connection took a chunk (a client that stops taking is cut off by its
 * caller) and `file.ended` once, however it ends. A client that goes away stops the reads.
 */
export async function sendFile(out: ServerResponse, file: FileRead, taken: () => void): Promise<void> {
  const buffers: [Buffer, Buffer] = [buffer(), buffer()];
  let gone = out.destroyed;
  const stop = () => {
    gone = true;
  };
  out.once('close', stop);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  let writing: Promise<boolean> = Promise.resolve(true);
  try {
    handle = await open(file.path, 'r');
    let at = file.start;
    for (let turn = 0; at <= file.end && !gone; turn ^= 1) {
      const into = turn === 0 ? buffers[0] : buffers[1];
      const length = Math.min(into.length, file.end - at + 1);
      const { bytesRead } = await handle.read(into, 0, length, at);
      if (bytesRead === 0) throw new Error(`${file.path} ended at byte ${at}, before ${file.end + 1}`);
      at += bytesRead;
      // The other buffer's bytes are taken before this one's are written (and it is read into next).
      if (!(await writing) || gone) break;
      writing = write(out, into.subarray(0, bytesRead), taken);
    }
    // Every byte taken: the answer ends; else its connection is cut, as a failed one is.
    if ((await writing) && !gone && at > file.end) out.end();
    else out.destroy();
  } catch {
    // A file that went or shrank, or a connection that failed: the client sees its answer cut off.
    out.destroy();
  } finally {
    out.off('close', stop);
    await writing;
    await handle?.close().catch(() => undefined);
    // Written or not, the connection holds no reference to them once its writes are done.
    for (const b of buffers) giveBack(b);
    file.ended();
  }
}

/**
 * Writes `chunk`: true once the connection has taken it (`taken` is told), false when it failed or
 * closed first (the bytes then go nowhere, and the buffer may be read into again).
 */
function write(out: ServerResponse, chunk: Buffer, taken: () => void): Promise<boolean> {
  return new Promise((resolve) => {
    const closed = () => resolve(false);
    out.once('close', closed);
    out.write(chunk, (err) => {
      out.off('close', closed);
      if (!err) taken();
      resolve(!err);
    });
  });
}
