import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Pool figures at scrape time: connections open, idle, and requests waiting for one. */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface Metrics {
  registry: Registry;
  observe(operation: string, method: string, status: number, seconds: number): void;
  /** A webhook delivery attempt's result: delivered, retry (failed, tried again later) or failed (given up). */
  webhookResult(result: 'delivered' | 'retry' | 'failed'): void;
  /** A background worker's batch failed (a statement it could not run): counted by queue. */
  backgroundError(queue: 'webhooks' | 'mail' | 'notifications' | 'workflows' | 'transcripts' | 'reply_mailbox'): void;
  /** A page of conversations answered from the pages kept in memory, or read from the database. */
  pageAnswered(from: 'memory' | 'database'): void;
}

/** The webhook deliveries waiting in the shared table, and how long the oldest has waited. */
export interface WebhookQueueStats {
  pending: number;
  oldestSeconds: number;
}

export function createMetrics(
  poolStats: () => Promise<PoolStats>,
  webhookQueue: () => Promise<WebhookQueueStats> = async () => ({ pending: 0, oldestSeconds: 0 }),
  pagesKeptBytes: () => number = () => 0,
  live: () => { streams: number; listening: boolean } = () => ({ streams: 0, listening: false }),
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by operation, method and status',
    labelNames: ['operation', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by operation and status',
    labelNames: ['operation', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database connections by state (open, idle) and requests waiting for one (waiting)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const s = await poolStats();
      this.set({ state: 'open' }, s.total);
      this.set({ state: 'idle' }, s.idle);
      this.set({ state: 'waiting' }, s.waiting);
    },
  });
  new Gauge({
    name: 'live_streams_open',
    help: 'Live event streams (conversation pages, embeds, inboxes) this process holds open',
    registers: [registry],
    collect() {
      this.set(live().streams);
    },
  });
  new Gauge({
    name: 'live_listener_up',
    help: '1 while this process listens for live events (LISTEN); 0 while it polls for them instead',
    registers: [registry],
    collect() {
      this.set(live().listening ? 1 : 0);
    },
  });
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this process, by result (delivered, retry, failed)',
    labelNames: ['result'],
    registers: [registry],
  });
  new Gauge({
    name: 'webhook_queue_pending',
    help: 'Webhook deliveries waiting to be delivered (all processes share the queue)',
    registers: [registry],
    async collect() {
      this.set((await webhookQueue()).pending);
    },
  });
  new Gauge({
    name: 'webhook_queue_oldest_pending_seconds',
    help: 'How long the oldest pending webhook delivery has waited',
    registers: [registry],
    async collect() {
      this.set((await webhookQueue()).oldestSeconds);
    },
  });
  const background = new Counter({
    name: 'background_errors_total',
    help: 'Batches of a background worker (webhooks, mail) that failed, each also logged at error level',
    labelNames: ['queue'],
    registers: [registry],
  });
  const pages = new Counter({
    name: 'page_cache_answers_total',
    help: 'Pages of conversations answered by this process, by where they came from (memory: kept by the account change mark; database)',
    labelNames: ['from'],
    registers: [registry],
  });
  new Gauge({
    name: 'page_cache_bytes',
    help: 'What the pages kept in memory are counted as against PAGE_CACHE_MB (three times their JSON text)',
    registers: [registry],
    collect() {
      this.set(pagesKeptBytes());
    },
  });
  return {
    registry,
    webhookResult: (result) => deliveries.inc({ result }),
    backgroundError: (queue) => background.inc({ queue }),
    pageAnswered: (from) => pages.inc({ from }),
    observe(operation, method, status, seconds) {
      requests.inc({ operation, method, status });
      duration.observe({ operation, status }, seconds);
    },
  };
}
