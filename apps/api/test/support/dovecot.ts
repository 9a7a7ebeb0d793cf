import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/*
 * Debian's Dovecot as the tests' IMAP server: started in the foreground on a free port of
 * loopback with a configuration of its own (plain IMAP, one static password, maildirs in a
 * temporary folder), as root the way Debian's own users run it, or as whoever runs the tests.
 */

export const DOVECOT = '/usr/sbin/dovecot';

export interface Dovecot {
  port: number;
  /** Its log file (what a failing test shows). */
  log: string;
  user: string;
  password: string;
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/** Whether Dovecot is installed here (.ci/run installs dovecot-imapd). */
export const hasDovecot = (): boolean => existsSync(DOVECOT);

export async function startDovecot(): Promise<Dovecot> {
  const dir = mkdtempSync(join(tmpdir(), 'convo-dovecot-'));
  const port = await freePort();
  const root = process.getuid?.() === 0;
  // As root, Dovecot's own users (Debian makes them); else everything as the user running the tests.
  const mailUser = root ? 'dovecot' : userInfo().username;
  const internal = root ? 'dovecot' : mailUser;
  const login = root ? 'dovenull' : mailUser;
  const mail = join(dir, 'mail');
  mkdirSync(mail, { recursive: true });
  if (root) {
    // Dovecot's mail user passes through the folder to its maildirs (mkdtemp makes it 0700).
    chmodSync(dir, 0o711);
    const uid = Number(execFileSync('id', ['-u', mailUser], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', mailUser], { encoding: 'utf8' }).trim());
    chownSync(mail, uid, gid);
  }
  const password = 'imap-test-password';
  const config = join(dir, 'dovecot.conf');
  writeFileSync(
    config,
    `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 1
mail_location = maildir:${mail}/%u
default_internal_user = ${internal}
default_internal_group = ${internal}
default_login_user = ${login}
passdb {
  driver = static
  args = password=${password}
}
userdb {
  driver = static
  args = uid=${mailUser} gid=${mailUser} home=${mail}/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service auth {
  user = ${root ? 'root' : mailUser}
}
`,
  );
  mkdirSync(join(dir, 'run'), { recursive: true });
  mkdirSync(join(dir, 'state'), { recursive: true });
  const child: ChildProcess = spawn(DOVECOT, ['-F', '-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  // Ready when its port answers.
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited: ${output}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createServer().listen(port, '127.0.0.1');
      socket.once('listening', () => socket.close(() => resolve(false)));
      socket.once('error', () => resolve(true));
    });
    if (open) break;
    if (Date.now() > deadline) throw new Error(`dovecot did not listen: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    log: join(dir, 'dovecot.log'),
    user: 'replies',
    password,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
