import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * A PostgreSQL server of the tests' own, from Debian's binaries (/usr/lib/postgresql/<n>/bin) in a
 * temporary directory on a free port, so a test may stop it and start it again without touching
 * the machine's shared server. As root, it runs as the postgres user (initdb refuses root).
 */

export interface ThrowawayPostgres {
  url: string;
  /** Fast shutdown: clients are disconnected, the server exits. */
  stop(): void;
  start(): void;
  destroy(): void;
}

/** Where the newest PostgreSQL's programs are (initdb, pg_ctl, pg_dump, pg_restore). */
export function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((x, y) => Number(y) - Number(x));
  if (versions.length === 0) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A free port below Linux's ephemeral range (32768 and up), for a listener that is closed and
 * bound again on the same port: in that range an outgoing connection of any process may take the
 * port as its own local one in between (the webhook receiver met EADDRINUSE so, on a busy machine).
 */
export async function stablePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const bin = binDir();
  const root = mkdtempSync(join(tmpdir(), 'convo-pg-'));
  const data = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(root, uid, gid);
  }
  const run = (program: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : join(bin, program),
      asRoot ? ['-u', 'postgres', '--', join(bin, program), ...args] : args,
      {
        stdio: 'pipe',
        timeout: 60_000,
      },
    );
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-N', '--locale=C.UTF-8']);
  // Stopped and started again on this port by the outage tests.
  const port = await stablePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-l', join(root, 'log'), '-o', options, '-w', '-t', '30', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    destroy() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
