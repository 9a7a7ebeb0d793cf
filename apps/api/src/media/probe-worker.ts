import { parentPort } from 'node:worker_threads';
import { measure } from './measure.ts';

/*
 * A thread of the probe's pool (probe.ts): it demuxes one recording at a time, asking the main
 * thread for each range of bytes it needs, so the store stays where it is, and posts each outcome.
 */

type FromMain =
  | { kind: 'probe'; job: number; size: number; maxSeconds: number }
  | { kind: 'bytes'; id: number; bytes?: Uint8Array; error?: string };

const port = parentPort;
if (!port) throw new Error('probe-worker.ts runs as a worker thread');

const pending = new Map<number, { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }>();
let next = 0;

port.on('message', (m: FromMain) => {
  if (m.kind === 'probe') {
    const read = (start: number, end: number) =>
      new Promise<Uint8Array>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        port.postMessage({ kind: 'read', job: m.job, id, start, end });
      });
    void measure(m.size, read, m.maxSeconds).then((outcome) => port.postMessage({ kind: 'done', job: m.job, outcome }));
    return;
  }
  const waiting = pending.get(m.id);
  pending.delete(m.id);
  if (m.bytes) waiting?.resolve(m.bytes);
  else waiting?.reject(new Error(m.error ?? 'the bytes could not be read'));
});
