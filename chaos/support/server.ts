import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './postgres.ts';

/* The real server and CLI, as processes started the way an operator starts them. */

const ROOT = new URL('../../', import.meta.url).pathname;
const NODE = process.execPath;
const execFileAsync = promisify(execFile);

export interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  /** What the process wrote (its JSON log lines), for a failing test to show. */
  output(): string;
  /**
   * With `--inspect=127.0.0.1:0`: the heap in use right after full collections forced through the
   * inspector (HeapProfiler.collectGarbage), in MB. Call it with no request in flight.
   */
  heapAfterGcMb(): Promise<number>;
  rssMb(): number;
  /** Resolves with the exit code (null when killed by a signal) and how long the exit took. */
  exited(): Promise<{ code: number | null; signal: string | null }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const baseEnv = (databaseUrl: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  NODE_ENV: 'production',
  RATE_LIMIT: '0',
  FORM_LIMIT_PER_IP: '0',
  FORM_LIMIT_PER_EMAIL: '0',
  MAIL_LIMIT_PER_ACCOUNT: '0',
  PAGE_LIMIT_PER_IP: '0',
  ...extra,
});

/** Runs the operator CLI with --json and returns what it printed. */
export function cli(databaseUrl: string, args: string[], env: Record<string, string> = {}): any {
  const out = execFileSync(NODE, [join(ROOT, 'apps/api/src/cli/main.ts'), ...args, '--json'], {
    env: baseEnv(databaseUrl, env),
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/**
 * The CLI without blocking this process: a load running beside it keeps sending and reading
 * (blocked, the load's sockets sit unread past the server's keep-alive and a POST meets a closed one).
 */
export async function cliAsync(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<any> {
  const { stdout } = await execFileAsync(NODE, [join(ROOT, 'apps/api/src/cli/main.ts'), ...args, '--json'], {
    env: baseEnv(databaseUrl, env),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

/** An account on the database (migrating it first), and its token. */
export function createAccount(databaseUrl: string, key: string): { id: number; token: string } {
  const made = cli(databaseUrl, [
    'account',
    'create',
    '--key',
    key,
    '--name',
    key,
    '--host',
    `https://${key}.example.com`,
    '--owner-email',
    `o@${key}.example.com`,
    '--owner-name',
    'Owner',
  ]);
  return { id: made.id, token: made.token.token };
}

export async function startServer(
  databaseUrl: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(NODE, [...nodeArgs, join(ROOT, 'apps/api/src/entry/node.ts')], {
    env: baseEnv(databaseUrl, { PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let inspectorUrl: string | undefined;
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(text)?.[1];
    output = (output + text).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  // Ready when it answers /readyz (the test's hook timeout bounds the wait); a server that exits
  // first fails the start at once, and a start that fails leaves no process behind.
  try {
    while (
      !(await fetch(`${baseUrl}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exit;
    throw e;
  }
  return {
    baseUrl,
    child,
    output: () => output,
    async heapAfterGcMb() {
      const url = inspectorUrl;
      if (!url) throw new Error('heapAfterGcMb needs the server started with --inspect=127.0.0.1:0');
      const used = await inspect(url, [
        { method: 'HeapProfiler.collectGarbage' },
        { method: 'HeapProfiler.collectGarbage' },
        { method: 'Runtime.evaluate', params: { expression: 'process.memoryUsage().heapUsed', returnByValue: true } },
      ]);
      return Number(used.result?.value) / 1024 / 1024;
    },
    rssMb() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    },
    exited: () => exit,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exit;
    },
  };
}

interface InspectorCall {
  method: string;
  params?: Record<string, unknown>;
}

/** Sends calls to a process's inspector (the DevTools protocol over WebSocket) in order; the last one's result. */
async function inspect(url: string, calls: InspectorCall[]): Promise<any> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  try {
    let last: any;
    for (const [id, call] of calls.entries()) {
      last = await new Promise((resolve, reject) => {
        const onMessage = (event: MessageEvent) => {
          const answer = JSON.parse(String(event.data));
          if (answer.id !== id) return;
          socket.removeEventListener('message', onMessage);
          if (answer.error) reject(new Error(`${call.method}: ${answer.error.message}`));
          else resolve(answer.result);
        };
        socket.addEventListener('message', onMessage);
        socket.send(JSON.stringify({ id, ...call }));
      });
    }
    return last;
  } finally {
    socket.close();
  }
}
