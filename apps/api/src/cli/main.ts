import { readFile } from 'node:fs/promises';
import { AdminError } from '@convo/db';
import { DomainError } from '@convo/domain';
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { registerCommands } from './commands.ts';

/*
 * The operator CLI: the API has no operations for accounts, tokens, users, workflows or intake
 * pages, so they live here. Every command takes --json for scripts.
 */

const program = new Command('convo')
  .description('Operate a Conversations API: accounts, tokens, users, workflows, intake pages, seeds, the server.')
  .showHelpAfterError()
  .exitOverride();

const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
program.version(pkg.version);

registerCommands(program, (defaults = {}) => {
  const config = loadConfig({ ...defaults, ...process.env });
  return { config, logger: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, 2) };
});

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode);
  const json = process.argv.includes('--json');
  const message =
    e instanceof AdminError || e instanceof ConfigError || e instanceof DomainError
      ? e.message
      : `unexpected error: ${(e as Error).message}`;
  if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  else process.stderr.write(`error: ${message}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
}
