/*
 * npm run test:pgbouncer — the database, client and API tests through PgBouncer (Debian's package)
 * in transaction mode, in front of the PostgreSQL server at DATABASE_URL (default the machine's
 * 127.0.0.1:5432). Proves the service keeps no session state: each transaction may land on another
 * server connection. PgBouncer refuses to run as root, so as root it runs as the postgres user.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const upstream = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const port = await new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const a = s.address();
    s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
  });
});

const dir = mkdtempSync(join(tmpdir(), 'convo-pgbouncer-'));
writeFileSync(join(dir, 'userlist.txt'), `"${upstream.username || 'postgres'}" ""\n`);
writeFileSync(
  join(dir, 'pgbouncer.ini'),
  `[databases]
* = host=${upstream.hostname} port=${upstream.port || 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
; node-postgres sends these at connect; a transaction-mode pooler cannot keep per-client settings.
ignore_startup_parameters = extra_float_digits,statement_timeout,idle_in_transaction_session_timeout
logfile = ${join(dir, 'pgbouncer.log')}
`,
);
const asRoot = process.getuid?.() === 0;
if (asRoot) {
  chownSync(
    dir,
    Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
    Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
  );
  for (const f of ['userlist.txt', 'pgbouncer.ini'])
    chownSync(join(dir, f), Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), 0);
}
const bouncer = spawn(
  asRoot ? 'runuser' : 'pgbouncer',
  asRoot ? ['-u', 'postgres', '--', 'pgbouncer', join(dir, 'pgbouncer.ini')] : [join(dir, 'pgbouncer.ini')],
  {
    stdio: 'inherit',
  },
);
await new Promise((r) => setTimeout(r, 1_000));
if (bouncer.exitCode !== null) throw new Error('pgbouncer did not start');

const via = new URL(upstream);
via.port = String(port);
console.log(`pgbouncer (transaction mode) on 127.0.0.1:${port} in front of ${upstream.host}`);
const result = spawnSync('vitest', ['run', 'packages/db', 'packages/client', 'apps/api', ...process.argv.slice(2)], {
  stdio: 'inherit',
  // LISTEN needs a session of its own: the live listener goes to PostgreSQL itself, as documented.
  env: {
    ...process.env,
    DATABASE_URL: via.toString(),
    LISTEN_DATABASE_URL: upstream.toString(),
    DB_NAMED_STATEMENTS: 'false',
  },
});
bouncer.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(result.status ?? 1);
