import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_MEDIA_LIMITS, type MediaProbe, type MediaStore, type ProbeOutcome } from '@convo/domain';

/*
 * Measures recordings (measure.ts) off the request's event loop: in a pool of worker threads (one
 * per core unless PROBE_THREADS says), each bounded in memory (its heap), in time (a probe past
 * `timeoutMs` is refused and its thread replaced), in bytes read, and in frames scanned (none past
 * the longest recording accepted: a longer one is refused from what its first minutes show).
 * Waiting recordings queue per sender (a client address; else the account, from the key), served
 * in turn, and one sender holds at most all threads but one, so one sender's slow files delay
 * their own next one, not everyone's; past PROBE_QUEUE_MAX waiting, a recording is answered busy
 * (503) at once. A thread asks this one for the byte ranges it needs, read from the store.
 * Mediabunny is written in TypeScript: nothing to download or ship beside `npm install`, the same
 * on Node and Deno. A probe that fails in any way refuses the recording; it never takes the server
 * down.
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

/** Recordings waiting to be measured, at most; past it one is answered busy, not queued. */
export const PROBE_QUEUE_MAX = 32;

/** Recordings one sender may have waiting at once; past it theirs is answered busy. */
export const PROBE_QUEUE_PER_SENDER = 8;

/**
 * Bytes one probe may read in all, beyond twice the file's size: a demuxer that reads a file over
 * and over (a file built to make it seek back and forth) is refused.
 */
const PROBE_EXTRA_BYTES = 16 * 1024 * 1024;

const REREAD = 'That file could not be measured: reading it took far more than its size.';

const BUSY = 'The server is measuring many recordings just now: send yours again in a moment.';

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
  /** Who sent it: its waiting turn is theirs. */
  sender: string;
  /** Bytes read for it and not yet handed to its thread. */
  held?: number;
  /** Bytes read for it in all. */
  read?: number;
}

export interface ProbeOptions {
  /** A probe past this is refused and its thread replaced. */
  timeoutMs?: number;
  /** Threads measuring at once (PROBE_THREADS); one per core unless told. */
  threads?: number;
  /** The longest recording accepted (MEDIA_MAX_SECONDS): no frame past it is scanned. */
  maxSeconds?: number;
}

/** One thread of the pool, and the job it measures. */
interface Slot {
  worker: Worker | null;
  job: (Job & { timer: ReturnType<typeof setTimeout> }) | null;
}

export class MediabunnyProbe implements MediaProbe {
  readonly timeoutMs: number;
  readonly threads: number;
  readonly maxSeconds: number;
  #slots: Slot[];
  /** Waiting jobs by sender, in the order senders take turns (a Map keeps insertion order). */
  #queues = new Map<string, Job[]>();
  #waiting = 0;
  /** Jobs being measured, by sender. */
  #running = new Map<string, number>();
  #lastSender: string | null = null;
  #jobs = 0;

  constructor(options: ProbeOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.threads = Math.max(1, options.threads ?? availableParallelism());
    this.maxSeconds = options.maxSeconds ?? DEFAULT_MEDIA_LIMITS.maxSeconds;
    this.#slots = Array.from({ length: this.threads }, () => ({ worker: null, job: null }));
  }

  probe(store: MediaStore, key: string, size: number, sender?: string): Promise<ProbeOutcome> {
    if (size === 0) return Promise.resolve(refusal('That recording is empty.'));
    // Without a sender, the account the key names (`<account>/<hex>`) takes turns as one.
    const who = sender ?? `account:${key.split('/')[0]}`;
    const theirs = this.#queues.get(who) ?? [];
    if (this.#waiting >= PROBE_QUEUE_MAX || theirs.length >= PROBE_QUEUE_PER_SENDER) {
      return Promise.resolve({ ok: false, problem: BUSY, busy: true });
    }
    return new Promise((resolve) => {
      theirs.push({ id: this.#jobs++, store, key, size, resolve, sender: who });
      this.#queues.set(who, theirs);
      this.#waiting += 1;
      this.#next();
    });
  }

  /**
   * The next sender's first job: a sender that holds fewer than all threads but one, another than
   * the last one served when there is one; that sender goes to the end of the turns.
   */
  #take(): Job | undefined {
    const share = Math.max(1, this.threads - 1);
    const senders = [...this.#queues.keys()].filter((s) => (this.#running.get(s) ?? 0) < share);
    const who = senders.find((s) => s !== this.#lastSender) ?? senders[0];
    const jobs = who === undefined ? undefined : this.#queues.get(who);
    const job = jobs?.shift();
    if (who === undefined || !jobs || !job) return undefined;
    this.#queues.delete(who);
    if (jobs.length > 0) this.#queues.set(who, jobs);
    this.#waiting -= 1;
    this.#lastSender = who;
    return job;
  }

  /** Gives each free thread a job while there are some; idle threads do not keep the process alive. */
  #next() {
    for (const slot of this.#slots) {
      if (slot.job) continue;
      const job = this.#take();
      if (!job) {
        slot.worker?.unref();
        continue;
      }
      this.#running.set(job.sender, (this.#running.get(job.sender) ?? 0) + 1);
      const worker = this.#thread(slot);
      worker.ref();
      const timer = setTimeout(
        () => this.#end(slot, refusal('That recording could not be measured in time.'), true),
        this.timeoutMs,
      );
      slot.job = { ...job, timer };
      worker.postMessage({ kind: 'probe', job: job.id, size: job.size, maxSeconds: this.maxSeconds });
    }
  }

  /** Answers a thread's probe; `replace`: its thread is stopped (stuck or broken) and made anew. */
  #end(slot: Slot, outcome: ProbeOutcome, replace = false) {
    const job = slot.job;
    if (!job) return;
    clearTimeout(job.timer);
    slot.job = null;
    const running = (this.#running.get(job.sender) ?? 1) - 1;
    if (running > 0) this.#running.set(job.sender, running);
    else this.#running.delete(job.sender);
    if (replace) {
      const stuck = slot.worker;
      slot.worker = null;
      void stuck?.terminate();
    }
    job.resolve(outcome);
    this.#next();
  }

  #thread(slot: Slot): Worker {
    if (slot.worker) return slot.worker;
    const worker = new Worker(WORKER, {
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB, maxYoungGenerationSizeMb: 16 },
    });
    worker.on('message', async (m: FromWorker) => {
      const job = slot.job;
      if (slot.worker !== worker || !job || m.job !== job.id) return;
      if (m.kind === 'done') return this.#end(slot, m.outcome);
      const length = m.end - m.start;
      const held = job.held ?? 0;
      // Asked for more than any recording's metadata needs, or more than its budget at once: the
      // file is refused and its thread (with whatever it built) replaced.
      if (length < 0 || length > PROBE_READ_MAX_BYTES || held + length > PROBE_BUFFER_BYTES) {
        return this.#end(slot, refusal(TOO_LARGE), true);
      }
      // A file read over and over: more than twice itself and a margin in all.
      job.read = (job.read ?? 0) + length;
      if (job.read > 2 * job.size + PROBE_EXTRA_BYTES) return this.#end(slot, refusal(REREAD), true);
      job.held = held + length;
      try {
        const bytes = await readRange(job.store.read(job.key, m.start, m.end - 1), length);
        if (slot.job === job) worker.postMessage({ kind: 'bytes', id: m.id, bytes }, [bytes.buffer]);
      } catch (err) {
        if (slot.job === job) worker.postMessage({ kind: 'bytes', id: m.id, error: (err as Error).message });
      } finally {
        job.held = (job.held ?? length) - length;
      }
    });
    // A thread that dies (out of its heap, say) refuses what it was measuring; the next gets a new one.
    const gone = () => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      this.#end(slot, refusal('That recording could not be measured.'));
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    slot.worker = worker;
    return worker;
  }
}

/**
 * A range's bytes, read chunk by chunk into one buffer of the length asked (never more: a store
 * that gives more is cut off there), so nothing grows past what the probe budgeted.
 */
export async function readRange(stream: ReadableStream<Uint8Array>, length: number): Promise<Uint8Array<ArrayBuffer>> {
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
