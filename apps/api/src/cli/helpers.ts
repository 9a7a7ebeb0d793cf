import type { Readable, Writable } from 'node:stream';
import type { EntityManager, MikroORM } from '@mikro-orm/core';
import { type Command, InvalidArgumentError } from 'commander';
import type { Logger } from '../logger.ts';
import type { Config } from '../start/config.ts';
import { migrateDatabase, openDatabase } from '../start/services.ts';

/* What every command shares: its environment, argument parsers, output and the database. */

/** Where a command reads and writes: the process's own streams and environment, or a test's. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
}

/** What a command is given: its streams, and its settings (`defaults` the environment may override). */
export interface Cli {
  io: CliIo;
  settings(defaults?: Record<string, string>): { config: Config; logger: Logger };
}

export const int = (what: string) => (value: string) => {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError(`${what} must be a positive whole number`);
  return Number(value);
};

export const jsonArray = (value: string): unknown[] => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('steps must be JSON, e.g. \'[{"action":"assign"}]\'');
  }
  if (!Array.isArray(parsed)) throw new InvalidArgumentError('steps must be a JSON array');
  return parsed;
};

export function emit(io: CliIo, json: boolean | undefined, data: unknown, text: string): void {
  io.stdout.write(json ? `${JSON.stringify(data)}\n` : `${text}\n`);
}

/** Opens the configured database (migrating it unless told not to), runs `work`, closes. */
export async function withDatabase<T>(cli: Cli, work: (em: EntityManager, orm: MikroORM) => Promise<T>): Promise<T> {
  const { config, logger } = cli.settings();
  const orm = await openDatabase(config, logger);
  try {
    if (config.migrateOnStart) await migrateDatabase(orm, logger);
    return await work(orm.em.fork(), orm);
  } finally {
    await orm.close();
  }
}

export const example = (cmd: Command, text: string) => cmd.addHelpText('after', `\nExample:\n  ${text}\n`);
