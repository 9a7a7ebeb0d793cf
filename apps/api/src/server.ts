import type { MikroORM } from '@mikro-orm/core';
import { type App, createApp } from './app.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { createServices, migrateDatabase, openDatabase } from './services.ts';

/** The app as the configuration describes it, on an open database. */
export function buildApp(orm: MikroORM, config: Config, logger: Logger): App {
  const services = createServices(orm, logger, { rateLimit: config.rateLimit });
  return createApp(services, {
    maxBodyBytes: config.maxBodyBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    bodyTimeoutMs: config.bodyTimeoutMs,
    maxBatch: config.maxBatch,
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    metricsToken: config.metricsToken,
  });
}

/** Everything a runtime entry needs: the app, built from config, and a way to close it. */
export async function buildServer(config: Config, logger: Logger): Promise<{ app: App; orm: MikroORM }> {
  const orm = await openDatabase(config, logger);
  if (config.migrateOnStart) await migrateDatabase(orm, logger);
  return { app: buildApp(orm, config, logger), orm };
}
