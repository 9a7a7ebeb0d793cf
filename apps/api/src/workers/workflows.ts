import { advanceWorkflows, type WorkflowJobStore } from '@convo/domain';
import type { Logger } from '../logger.ts';
import { type QueueWorker, startQueueWorker } from './queue-worker.ts';

/*
 * Runs conversations' workflows (domain: workflows.ts, run-workflow-step.ts): each round plans the
 * step jobs of new events (a conversation created, a message posted) and runs the steps that are
 * due. Both are tables taken with SKIP LOCKED, so every replica runs one, a restart loses nothing
 * (a step due while no process ran is taken by the first round after), and a step runs at most once.
 */

/** Steps per transaction: a batch's fixed statements (claim, lock, record, change mark) shared by many. */
const BATCH = 200;

export interface WorkflowWorkerOptions {
  logger: Logger;
  /** How often to look for due steps (default 500 ms). */
  intervalMs?: number;
  /** Told after a round did something: a step may have queued mail. */
  onProgress?: () => void;
  onError?: () => void;
  busy?: () => Promise<boolean>;
}

export function startWorkflowWorker(store: WorkflowJobStore, options: WorkflowWorkerOptions): QueueWorker {
  return startQueueWorker({
    name: 'the workflows',
    logger: options.logger,
    intervalMs: options.intervalMs ?? 500,
    onError: options.onError,
    busy: options.busy,
    // Steps give way to requests, but never for long: half a second per batch at most.
    maxYieldMs: 500,
    async step() {
      const did = await advanceWorkflows(store, BATCH);
      if (did) options.onProgress?.();
      return did;
    },
  });
}
