import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { serveOnNode } from '../serve-node.ts';
import { buildServer } from '../server.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const { app, orm } = await buildServer(config, logger);
await serveOnNode(app, orm, { host: config.host, port: config.port, logger, sendTimeoutMs: config.sendTimeoutMs });
process.exit(0);
