import { createLogger } from '../logger.ts';
import { loadConfig } from '../start/config.ts';
import { serveOnNode } from '../start/serve-node.ts';
import { buildServer } from '../start/server.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const { app, orm } = await buildServer(config, logger);
await serveOnNode(app, orm, { host: config.host, port: config.port, logger, sendTimeoutMs: config.sendTimeoutMs });
process.exit(0);
