import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { buildServer } from '../server.ts';

/** After SIGTERM: requests in flight get this long to finish before their connections are cut. */
const DRAIN_MS = 8_000;

const config = loadConfig();
const logger = createLogger(config.logLevel);
const { app, orm } = await buildServer(config, logger);
const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) =>
  logger.info({ url: `http://${config.host}:${info.port}`, pid: process.pid }, 'listening'),
) as Server;

// A stray rejection is a bug to log, not a reason to drop every request in flight.
process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));

let stopping = false;
function stop(signal: string): void {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping: no new connections; finishing the requests in flight');
  // Answers from now on carry `Connection: close`, and idle keep-alive connections are closed, so
  // no client sends a request on a connection that is about to go.
  app.drain();
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
  server.close(() => {
    clearInterval(idle);
    clearTimeout(cut);
    void orm
      .close()
      .catch((err: unknown) => logger.error({ err }, 'closing the database pool failed'))
      .finally(() => logger.flush(() => process.exit(0)));
  });
}
process.once('SIGINT', () => stop('SIGINT')).once('SIGTERM', () => stop('SIGTERM'));
