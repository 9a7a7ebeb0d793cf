import { readFile } from 'node:fs/promises';
import { AdminError } from '@convo/db';
import { DomainError } from '@convo/domain';
import { Command, CommanderError } from 'commander';
import { createLogger } from '../logger.ts';
import { ConfigError, loadConfig } from '../start/config.ts';
import { registerCommands } from './commands.ts';
import type { CliIo } from './helpers.ts';

/*
 * The operator CLI: the API has no operations for accounts, tokens, users, workflows or intake
 * pages, so they live here. Every command takes --json for scripts. `runCli` runs one command line
 * with the streams and environment it is given (main.ts gives the process's own; the tests theirs)
 * and answers its exit code.
 */

const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const program = new Command('convo')
    .description(
      'Operate a Conversations API: accounts, tokens, users, workflows, intake pages, templates, seeds, the server.',
    )
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) });
  program.version(pkg.version);
  registerCommands(program, {
    io,
    settings: (defaults = {}) => {
      const config = loadConfig({ ...defaults, ...io.env });
      const level = config.logLevel === 'info' ? 'warn' : config.logLevel;
      return { config, logger: createLogger(level, { write: (line: string) => io.stderr.write(line) }) };
    },
  });
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode;
    const message =
      e instanceof AdminError || e instanceof ConfigError || e instanceof DomainError
        ? e.message
        : `unexpected error: ${(e as Error).message}`;
    if (args.includes('--json')) io.stdout.write(`${JSON.stringify({ error: message })}\n`);
    else io.stderr.write(`error: ${message}\n`);
    return e instanceof ConfigError ? 2 : 1;
  }
}
