import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DB, ROOT, TOKEN } from './options.ts';

/* The two servers (the product and the hand-written baseline): started, watched for peak RSS. */

export interface Server {
  name: string;
  base: string;
  child: ChildProcess;
}

/** Measured as deployed: with the Node options of `npm start`. */
export { startOptions } from '../scripts/start-options.ts';

export async function start(
  name: string,
  script: string,
  port: number,
  options: string[] = [],
  env: Record<string, string> = {},
): Promise<Server> {
  const child = spawn(process.execPath, [...options, join(ROOT, script)], {
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: DB,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      DB_POOL_MAX: '10',
      LOG_LEVEL: 'info',
      MIGRATE_ON_START: 'false',
      // The reply scenario posts from one address as fast as it can.
      FORM_LIMIT_PER_IP: '0',
      FORM_LIMIT_PER_EMAIL: '0',
      MAIL_LIMIT_PER_ACCOUNT: '0',
      // Page reads are not what the bench measures: no per-address limit.
      PAGE_LIMIT_PER_IP: '0',
      // The plays section reports plays from one address as fast as it can.
      PLAY_LIMIT_PER_IP: '0',
      // The live section holds 2,000 streams open from this one address.
      LIVE_STREAMS_PER_CLIENT: '100000',
      // The webhook scenario's receiver listens on 127.0.0.1.
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${base}/api/v1/conversations/get_conversation`, {
      headers: { authorization: TOKEN },
    }).catch(() => null);
    if (res?.ok) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      // A server that came up but cannot answer (no bench data yet) must not keep the port.
      child.kill();
      throw new Error(`${name} did not start (was the data loaded? --skip-load needs an earlier run)`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { name, base, child };
}

/** The server's RSS now (VmRSS), in MB. */
export const rssMb = (server: Server) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** Stops a server started for one section, once it has exited. */
export async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((r) => server.child.once('exit', r));
  if (server.child.exitCode === null && server.child.kill('SIGTERM')) await exited;
}

/** The highest RSS since the last `resetPeak` (the kernel's VmHWM), and the highest of the whole run. */
export const runPeak = new Map<string, number>();
export function peakRssMb(server: Server): number {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const mb = Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  runPeak.set(server.name, Math.max(runPeak.get(server.name) ?? 0, mb));
  return mb;
}

/** Starts a new peak-RSS window (writing 5 to clear_refs resets VmHWM to the current RSS). */
export function resetPeak(server: Server): void {
  peakRssMb(server);
  writeFileSync(`/proc/${server.child.pid}/clear_refs`, '5');
}
