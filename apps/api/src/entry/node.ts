import { flushCompileCache } from 'node:module';
import { createLogger } from '../logger.ts';
import { loadConfig } from '../start/config.ts';
import { serveOnNode } from '../start/serve-node.ts';
import { buildServer } from '../start/server.ts';

/* `npm start`. Only as the program: `npm install` imports every module once to fill the compile cache. */
if (import.meta.main) {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const { app, orm } = await buildServer(config, logger);
  await serveOnNode(app, orm, {
    host: config.host,
    port: config.port,
    logger,
    sendTimeoutMs: config.sendTimeoutMs,
    onListen: () => flushCompileCache(),
  });
  process.exit(0);
}
