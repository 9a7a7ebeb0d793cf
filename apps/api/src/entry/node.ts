import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { serve } from '@hono/node-server';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { buildServer } from '../server.ts';

/** After SIGTERM: requests in flight get this long to finish before their connections are cut. */
const DRAIN_MS = 8_000;
/** After SIGTERM, keep-alive connections may still bring a request this long before idle ones are closed. */
const IDLE_GRACE_MS = 1_000;

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
  // Answers from now on carry `Connection: close`, so each busy connection ends after its next
  // answer. Idle ones are closed only after a grace: closing one at once races a request the client
  // may be writing on it, which it would see as a reset.
  app.drain();
  let idle: ReturnType<typeof setInterval> | undefined;
  const grace = setTimeout(() => {
    idle = setInterval(() => server.closeIdleConnections(), 50);
  }, IDLE_GRACE_MS);
  const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
  // net.Server's close stops listening and waits for the connections; http.Server's would also
  // close the idle ones at once.
  NetServer.prototype.close.call(server, () => {
    clearTimeout(grace);
    clearInterval(idle);
    clearTimeout(cut);
    void orm
      .close()
      .catch((err: unknown) => logger.error({ err }, 'closing the database pool failed'))
      .finally(() => logger.flush(() => process.exit(0)));
  });
}
process.once('SIGINT', () => stop('SIGINT')).once('SIGTERM', () => stop('SIGTERM'));
