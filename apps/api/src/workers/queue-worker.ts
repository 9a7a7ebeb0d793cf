import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.ts';

/*
 * The loop every background queue of this process shares (mail, webhook deliveries): look for due
 * work every `intervalMs` and whenever kicked, take it a batch at a time until none is left, and
 * stop cleanly. The queues are tables claimed with SKIP LOCKED, so any number of processes may run
 * one each.
 */

export interface QueueWorker {
  /** Look for due work now (a request just queued some). */
  kick(): void;
  /** No new batch starts; resolves when the current one is done. */
  stop(): Promise<void>;
}

export interface QueueWorkerOptions {
  /** For the log line when a batch cannot be read: e.g. "the mail queue". */
  name: string;
  logger: Logger;
  intervalMs: number;
  /** Takes and handles one batch; false when there was nothing due. */
  step(): Promise<boolean>;
  /**
   * True while the API's requests are waiting for a database connection. The API comes first:
   * a new batch waits while it is busy, but never longer than `maxYieldMs`, so work still moves
   * (more slowly) under a load that never lets up.
   */
  busy?: () => Promise<boolean>;
  maxYieldMs?: number;
  /** Told when a batch fails (after it is logged at error level): /metrics counts it. */
  onError?: (() => void) | undefined;
}

const YIELD_STEP_MS = 20;

export function startQueueWorker(queue: QueueWorkerOptions): QueueWorker {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const yieldToRequests = async () => {
    for (
      let waited = 0;
      !stopped && waited < (queue.maxYieldMs ?? 0) && (await queue.busy?.());
      waited += YIELD_STEP_MS
    ) {
      await sleep(YIELD_STEP_MS);
    }
  };

  const drain = async () => {
    do {
      again = false;
      while (!stopped) {
        await yieldToRequests();
        if (stopped || !(await queue.step())) break;
      }
    } while (again && !stopped);
  };

  const kick = () => {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = drain()
      .catch((err: unknown) => {
        // A statement the worker cannot run is a fault to see, not a warning: it retries at the next interval.
        queue.logger.error({ err }, `${queue.name}: a batch failed`);
        queue.onError?.();
      })
      .finally(() => {
        running = null;
      });
  };

  const timer = setInterval(kick, queue.intervalMs);
  timer.unref();
  kick();
  return {
    kick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
