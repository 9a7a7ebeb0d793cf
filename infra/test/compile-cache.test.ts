import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../chaos/support/postgres.ts';
import { startOptions } from '../../scripts/start-options.ts';

/*
 * `npm install` (and the image's build) fills Node's compile cache (scripts/warm-compile-cache.ts)
 * so that the server, started as `npm start` starts it, takes every module's stripped source from
 * the cache and never loads Node's TypeScript stripper (some 17 MB of resident memory for its whole
 * life, issue 39). What the server read from the cache is what Node reports with
 * NODE_DEBUG_NATIVE=COMPILE_CACHE. Nothing here depends on the database: the server runs on a
 * throwaway PGlite directory, once (not again in the stages on a PostgreSQL server).
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts the server as `npm start` does; stops it once it answers /readyz. Its stderr. */
async function startAndStop(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [...startOptions(), 'apps/api/src/entry/node.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  while (
    !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null) throw new Error(`the server exited:\n${stderr.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  await exited;
  return stderr;
}

describe('the compile cache', () => {
  it.skipIf(process.env.DATABASE_URL)(
    'is filled by the install, and a server started after it strips no TypeScript itself',
    async () => {
      const cache = tempDir('convo-compile-cache-');
      const warm = spawnSync(process.execPath, ['scripts/warm-compile-cache.ts'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: cache },
        encoding: 'utf8',
      });
      expect(warm.status).toBe(0);
      expect(warm.stdout).toMatch(new RegExp(`compile cache: \\d+ modules in ${cache}`));

      const stderr = await startAndStop({
        NODE_COMPILE_CACHE: cache,
        NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
        DATA_DIR: tempDir('convo-compile-cache-data-'),
      });
      // Each of our modules the server loaded: its stripped source retrieved, or stripped anew.
      const retrieved = [...stderr.matchAll(/retrieving transpile cache for StrippedTypeScript (\S+)\.\.\.(\w+)/g)];
      expect(retrieved.map((m) => m[1])).toContain(`file://${ROOT}apps/api/src/entry/node.ts`);
      expect(retrieved.length).toBeGreaterThan(300);
      expect(retrieved.filter((m) => m[2] !== 'success').map((m) => m[1])).toEqual([]);

      // The media probe's worker thread reads the same cache (handed over through the environment).
      const worker = spawnSync(
        process.execPath,
        [
          ...startOptions(),
          '-e',
          `const { Worker } = require('node:worker_threads');
           const w = new Worker(new URL('apps/api/src/media/probe-worker.ts', 'file://${ROOT}'));
           setTimeout(() => w.terminate(), 1000);`,
        ],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: cache, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
          encoding: 'utf8',
        },
      );
      expect(worker.stderr).toMatch(
        /retrieving transpile cache for StrippedTypeScript \S+\/probe-worker\.ts\.\.\.success/,
      );
    },
    60_000,
  );

  it('is only an optimization: with a directory it cannot use, the CLI runs all the same', () => {
    const notADirectory = join(tempDir('convo-compile-cache-file-'), 'file');
    writeFileSync(notADirectory, '');
    const cli = spawnSync(process.execPath, [...startOptions('cli'), 'apps/api/src/cli/main.ts', '--help'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', NODE_COMPILE_CACHE: join(notADirectory, 'cache') },
      encoding: 'utf8',
    });
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(/^Usage: convo/);
  });
});
