import { serve } from '@hono/node-server';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { buildServer } from '../server.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const { app, orm } = await buildServer(config, logger);
const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) =>
  logger.info({ url: `http://${config.host}:${info.port}` }, 'listening'),
);
const stop = () => server.close(() => void orm.close().then(() => logger.flush(() => process.exit(0))));
process.once('SIGINT', stop).once('SIGTERM', stop);
