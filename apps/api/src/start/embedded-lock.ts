import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.ts';

/*
 * The embedded database (PGlite) runs inside one process and keeps no lock of its own: a second
 * process opening the same DATA_DIR (a CLI command while the server runs) would corrupt it. The
 * process that opens it writes its pid into DATA_DIR/convo.pid and removes it when it exits; a
 * file whose process is gone (killed) is taken over.
 */

export const LOCK_FILE = 'convo.pid';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const held = new Set<string>();

/** Takes the data directory for this process, or says who has it. */
export function lockDataDir(dataDir: string): void {
  const file = join(dataDir, LOCK_FILE);
  if (held.has(file)) return;
  let holder: number | null = null;
  try {
    holder = Number(readFileSync(file, 'utf8').trim());
  } catch {
    // no holder
  }
  if (holder !== null && holder !== process.pid && Number.isInteger(holder) && holder > 0 && alive(holder)) {
    throw new ConfigError(
      `the embedded database in ${dataDir} is open in process ${holder} (the server?): stop it first, or use PostgreSQL (DATABASE_URL) to share one database`,
    );
  }
  writeFileSync(file, String(process.pid));
  held.add(file);
  process.once('exit', () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file);
    } catch {
      // already gone
    }
  });
}
