import { Worker } from 'node:worker_threads';
import type { MediaProbe, MediaStore, ProbeOutcome } from '@convo/domain';

/*
 * Measures recordings (measure.ts) off the request's event loop: in one worker thread, bounded in
 * memory (its heap) and in time (a probe past `timeoutMs` is refused and the thread replaced), one
 * recording at a time, in the order they arrived. The thread asks this one for the byte ranges it
 * needs, read from the store. Mediabunny is written in TypeScript: nothing to download or ship
 * beside `npm install`, the same on Node and Deno. A probe that fails in any way refuses the
 * recording; it never takes the server down.
 */

const WORKER = new URL('./probe-worker.ts', import.meta.url);

/** The worker's heap: the demuxer's 4 MB cache and its bookkeeping fit many times over. */
const HEAP_MB = 64;

/**
 * The most one read of the probe may ask for: a recording's metadata (an MP4's `moov`, a WebM's
 * cues) is read whole, and a real one is far smaller. A file whose metadata asks for more is
 * refused before a byte of it is read (a crafted 200 MB `moov` took a replica's memory to 1 GB).
 */
export const PROBE_READ_MAX_BYTES = 16 * 1024 * 1024;

/** Bytes one probe may hold read and not yet taken by its thread (its reads in flight), at once. */
export const PROBE_BUFFER_BYTES = 2 * PROBE_READ_MAX_BYTES;

const TOO_LARGE = `That file's metadata is over ${PROBE_READ_MAX_BYTES / 1024 / 1024} MB: it is not a recording this site can play.`;

const refusal = (problem: string): ProbeOutcome => ({ ok: false, problem });

type FromWorker =
  | { kind: 'read'; job: number; id: number; start: number; end: number }
  | { kind: 'done'; job: number; outcome: ProbeOutcome };

interface Job {
  id: number;
  store: MediaStore;
  key: string;
  size: number;
  resolve: (outcome: ProbeOutcome) => void;
  /** Bytes read for it and not yet handed to its thread. */
  held?: number;
}

export class MediabunnyProbe implements MediaProbe {
  readonly timeoutMs: number;
  #worker: Worker | null = null;
  #queue: Job[] = [];
  #current: (Job & { timer: ReturnType<typeof setTimeout>; worker: Worker }) | null = null;
  #jobs = 0;

  constructor(timeoutMs = 10_000) {
    this.timeoutMs = timeoutMs;
  }

  probe(store: MediaStore, key: string, size: number): Promise<ProbeOutcome> {
    if (size === 0) return Promise.resolve(refusal('That recording is empty.'));
    return new Promise((resolve) => {
      this.#queue.push({ id: this.#jobs++, store, key, size, resolve });
      this.#next();
    });
  }

  #next() {
    if (this.#current) return;
    const job = this.#queue.shift();
    if (!job) {
      // Nothing to measure: the thread does not keep the process alive.
      this.#worker?.unref();
      return;
    }
    const worker = this.#thread();
    worker.ref();
    const timer = setTimeout(
      () => this.#end(refusal('That recording could not be measured in time.'), true),
      this.timeoutMs,
    );
    this.#current = { ...job, timer, worker };
    worker.postMessage({ kind: 'probe', job: job.id, size: job.size });
  }

  /** Answers the current probe; `replace`: its thread is stopped (stuck or broken) and made anew. */
  #end(outcome: ProbeOutcome, replace = false) {
    const job = this.#current;
    if (!job) return;
    clearTimeout(job.timer);
    this.#current = null;
    if (replace) {
      const stuck = this.#worker;
      this.#worker = null;
      void stuck?.terminate();
    }
    job.resolve(outcome);
    this.#next();
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER, {
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB, maxYoungGenerationSizeMb: 16 },
    });
    worker.on('message', async (m: FromWorker) => {
      const job = this.#current;
      if (!job || m.job !== job.id) return;
      if (m.kind === 'done') return this.#end(m.outcome);
      const length = m.end - m.start;
      const held = job.held ?? 0;
      // Asked for more than any recording's metadata needs, or more than its budget at once: the
      // file is refused and its thread (with whatever it built) replaced.
      if (length < 0 || length > PROBE_READ_MAX_BYTES || held + length > PROBE_BUFFER_BYTES) {
        return this.#end(refusal(TOO_LARGE), true);
      }
      job.held = held + length;
      try {
        const bytes = await readRange(job.store.read(job.key, m.start, m.end - 1), length);
        if (this.#current === job) worker.postMessage({ kind: 'bytes', id: m.id, bytes }, [bytes.buffer]);
      } catch (err) {
        if (this.#current === job) worker.postMessage({ kind: 'bytes', id: m.id, error: (err as Error).message });
      } finally {
        job.held = (job.held ?? length) - length;
      }
    });
    // A thread that dies (out of its heap, say) refuses what it was measuring; the next gets a new one.
    const gone = () => {
      if (this.#worker === worker) this.#worker = null;
      if (this.#current?.worker === worker) this.#end(refusal('That recording could not be measured.'));
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.#worker = worker;
    return worker;
  }
}

/**
 * A range's bytes, read chunk by chunk into one buffer of the length asked (never more: a store
 * that gives more is cut off there), so nothing grows past what the probe budgeted.
 */
async function readRange(stream: ReadableStream<Uint8Array>, length: number): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(length);
  const reader = stream.getReader();
  let at = 0;
  try {
    while (at < length) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, length - at);
      bytes.set(take === value.byteLength ? value : value.subarray(0, take), at);
      at += take;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return at === length ? bytes : bytes.slice(0, at);
}
