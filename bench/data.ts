import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DB, LARGE, LARGE_TOKEN, log, N, PAGE_MESSAGES, PAGE_TOKEN, ROOT, TOKEN } from './options.ts';

/* The data: seed files written and loaded through the project's own `convo seed`. */

export async function writeSeed(file: string, key: string, token: string, count: number, messages = 5): Promise<void> {
  const out = createWriteStream(file);
  const write = (s: string) => (out.write(s) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  const users = [0, 1, 2].map((i) => ({ email: `user${i}@${key}.example.com`, name: `User ${i}` }));
  await write(
    `{"accounts":[{"key":${JSON.stringify(key)},"name":"Bench","host":"https://${key}.example.com","owner":"${users[0]?.email}",` +
      `"users":${JSON.stringify(users)},"tokens":[{"name":"bench","token":"${token}"}],"conversations":[`,
  );
  const start = Date.UTC(2020, 0, 1);
  for (let i = 1; i <= count; i++) {
    const created = new Date(start + i * 60_000).toISOString().replace('Z', `${String(i % 1000).padStart(3, '0')}Z`);
    const c = {
      title: `Bench conversation ${i}`,
      slug: `${key}-${i}`,
      created_at: created,
      members: users.map((u) => u.email),
      tags: ['alpha', 'beta'],
      messages: Array.from({ length: messages }, (_, j) => ({
        author: j % 2 ? null : users[j % 3]?.email,
        text: `Message ${j} of conversation ${i}`,
      })),
    };
    await write((i === 1 ? '' : ',') + JSON.stringify(c));
  }
  await write(']}]}');
  await new Promise<void>((r) => out.end(r));
}

export function cli(args: string[], env: Record<string, string> = {}): string {
  return execFileSync(process.execPath, [join(ROOT, 'apps/api/src/cli/main.ts'), ...args], {
    env: { ...process.env, DATABASE_URL: DB, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

export async function load(): Promise<Record<string, number>> {
  const url = new URL(DB);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.query(`create database "${name}"`);
  await admin.end();
  cli(['migrate']);
  const dir = mkdtempSync(join(tmpdir(), 'convo-bench-'));
  const timings: Record<string, number> = {};
  try {
    const accounts: [string, string, number, number][] = [
      ['bench', TOKEN, N, 5],
      // pages-1 is read by the page scenario; pages-2 takes the replies of the reply scenario.
      ['pages', PAGE_TOKEN, 2, PAGE_MESSAGES],
    ];
    if (LARGE) accounts.push(['large', LARGE_TOKEN, LARGE, 5]);
    for (const [key, token, count, messages] of accounts) {
      const file = join(dir, `${key}.json`);
      await writeSeed(file, key, token, count, messages);
      log(`loading ${count} conversations (${messages} messages, 3 members, 2 tags each) through \`convo seed\`…`);
      const report = JSON.parse(cli(['seed', file, '--json']));
      timings[key] = report.seconds;
      log(`  loaded in ${report.seconds.toFixed(1)} s (${Math.round(count / report.seconds)} conversations/s)`);
      rmSync(file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const db = new pg.Client({ connectionString: DB });
  await db.connect();
  await db.query('vacuum analyze');
  await db.end();
  return timings;
}
