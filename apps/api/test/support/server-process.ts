import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDatabase, type TestDatabase } from '@convo/db/testing';

/*
 * The real server, started as a process the way an operator starts it (`node entry/node.ts`), on a
 * throwaway database: a temporary PGlite directory, or a fresh database when DATABASE_URL is set.
 * It is run by path, as a program (the client's tests use it too, importing nothing of the app).
 * It is ready when it answers /readyz; a server that exits first fails the start at once, with
 * what it wrote; a start that fails leaves no process or database behind.
 */

const ROOT = new URL('../../../../', import.meta.url).pathname;

/** A port nothing listens on just now. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });

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
  const removeDatabase = async () => {
    await db?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  let token: string;
  try {
    const made = execFileSync(
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
    );
    token = JSON.parse(made).token.token;
    if (o.seed)
      execFileSync(process.execPath, [join(ROOT, 'apps/api/src/cli/main.ts'), 'seed', o.seed, '--json'], { env });
    env.PORT = String(await freePort());
  } catch (e) {
    await removeDatabase();
    throw e;
  }
  const child = spawn(process.execPath, [join(ROOT, 'apps/api/src/entry/node.ts')], {
    env: { ...env, ...o.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    // A drain held open by a test's own half-sent requests must not hang the file's last hook.
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
    await removeDatabase();
  };
  const baseUrl = `http://127.0.0.1:${env.PORT}`;
  try {
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    while (
      !(await fetch(`${baseUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (gone) throw new Error(`the server exited before it was ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { baseUrl, pid: child.pid as number, token, stop };
}
