import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDatabase, type TestDatabase } from '@convo/db/testing';

/*
 * The real server, started as a process the way an operator starts it (`node entry/node.ts`), on a
 * throwaway database: a temporary PGlite directory, or a fresh database when DATABASE_URL is set.
 * It is run by path, as a program: this package imports nothing from the app.
 */

const ROOT = new URL('../../../../', import.meta.url).pathname;

export interface RunningServer {
  baseUrl: string;
  pid: number;
  token: string;
  stop(): Promise<void>;
}

export interface ServerOptions {
  /** More environment for the server (its limits, say). */
  env?: Record<string, string>;
  /** A seed file to load (with the CLI) before the server starts. */
  seed?: string;
}

export async function startServer(o: ServerOptions = {}): Promise<RunningServer> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
  if (process.env.DB_NAMED_STATEMENTS) env.DB_NAMED_STATEMENTS = process.env.DB_NAMED_STATEMENTS;
  let db: TestDatabase | undefined;
  let dataDir: string | undefined;
  if (process.env.DATABASE_URL) {
    db = await openTestDatabase();
    env.DATABASE_URL = db.url as string;
  } else {
    dataDir = mkdtempSync(join(tmpdir(), 'convo-client-'));
    env.DATA_DIR = dataDir;
  }
  const account = JSON.parse(
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'apps/api/src/cli/main.ts'),
        'account',
        'create',
        '--key',
        'client',
        '--name',
        'Client tests',
        '--host',
        'https://client.example.com',
        '--owner-email',
        'o@client.example.com',
        '--owner-name',
        'Owner',
        '--json',
      ],
      { env, encoding: 'utf8' },
    ),
  );
  if (o.seed)
    execFileSync(process.execPath, [join(ROOT, 'apps/api/src/cli/main.ts'), 'seed', o.seed, '--json'], { env });
  const port = 4100 + Math.floor(Math.random() * 800);
  env.PORT = String(port);
  const child = spawn(process.execPath, [join(ROOT, 'apps/api/src/entry/node.ts')], {
    env: { ...env, ...o.env },
    stdio: 'ignore',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`${baseUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('the server did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    baseUrl,
    pid: child.pid as number,
    token: account.token.token,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
      await db?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
