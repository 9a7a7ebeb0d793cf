import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sleep } from './support/load.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * PostgreSQL stopped while people post replies on a conversation page, then started again: every
 * reply the page acknowledged (its 303 to the message) is stored, a reply the database could not
 * take is answered with the HTML retry page (503), never a 500, and after the outage posting works.
 */

let db: ThrowawayPostgres;
let server: ServerProcess;

beforeAll(async () => {
  db = await startThrowawayPostgres();
  createAccount(db.url, 'replies');
  server = await startServer(db.url);
  // The account's site is this server, so its pages answer on the address we call.
  cli(db.url, ['account', 'set-host', '--key', 'replies', '--host', server.baseUrl]);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(
    `insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines)
     select id, 'Outage', 'outage', 'outage', true, true, false from account where key = 'replies'`,
  );
  await client.end();
});
afterAll(async () => {
  await server?.kill();
  db?.destroy();
});

interface Attempt {
  started: number;
  status: number;
  messageId?: number;
  text: string;
  error?: string;
}

/** One person: open the page, post a reply with its form, record what came back. */
async function replyOnce(worker: number, n: number): Promise<Attempt> {
  const started = performance.now();
  const text = `worker ${worker} reply ${n}`;
  try {
    const got = await request(`${server.baseUrl}/c/outage`);
    const html = await got.body.text();
    if (got.statusCode !== 200)
      return {
        started,
        status: got.statusCode,
        text,
        error: html.includes('Temporarily unavailable') ? 'retry page' : html.slice(0, 100),
      };
    const cookie = String(got.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const submit = /name="submit" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const posted = await request(`${server.baseUrl}/c/outage`, {
      method: 'POST',
      headers: { cookie, origin: server.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, submit, text }).toString(),
    });
    const body = await posted.body.text();
    const location = String(posted.headers.location ?? '');
    const id = /#message-(\d+)$/.exec(location)?.[1];
    return {
      started,
      status: posted.statusCode,
      text,
      ...(id ? { messageId: Number(id) } : {}),
      ...(posted.statusCode === 503 && !body.includes('not saved') ? { error: 'no retry page' } : {}),
    };
  } catch (e) {
    return { started, status: 0, text, error: (e as Error).message };
  }
}

it('loses no acknowledged reply in a database outage, and shows the retry page instead of a 500', async () => {
  const attempts: Attempt[] = [];
  let running = true;
  const workers = Array.from({ length: 8 }, async (_, w) => {
    for (let n = 0; running; n++) {
      const a = await replyOnce(w, n);
      attempts.push(a);
      if (a.status === 0 || a.status === 503) await sleep(50);
    }
  });
  await sleep(2_000);
  db.stop();
  await sleep(4_000);
  db.start();
  const up = performance.now();
  await sleep(6_000);
  running = false;
  await Promise.all(workers);

  const acknowledged = attempts.filter((a) => a.status === 303);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const stored = await client.query<{ id: number; text: string }>('select id, text from message where id = any($1)', [
    acknowledged.map((a) => a.messageId),
  ]);
  await client.end();
  const storedText = new Map(stored.rows.map((r) => [r.id, r.text]));
  const lost = acknowledged.filter((a) => storedText.get(a.messageId ?? 0) !== a.text);
  const by: Record<string, number> = {};
  for (const a of attempts) by[a.status || 'network'] = (by[a.status || 'network'] ?? 0) + 1;
  console.log(
    `replies under a database outage: ${attempts.length} attempts ${JSON.stringify(by)}; acknowledged ${acknowledged.length}, lost ${lost.length}`,
  );

  expect(server.child.exitCode, server.output()).toBeNull();
  expect(lost).toEqual([]);
  expect(attempts.filter((a) => a.status === 503).length).toBeGreaterThan(0);
  expect(attempts.filter((a) => a.status !== 303 && a.status !== 503)).toEqual([]);
  expect(attempts.filter((a) => a.error && a.status !== 503)).toEqual([]);
  expect(attempts.filter((a) => a.status === 503 && a.error === 'no retry page')).toEqual([]);
  // Posting works again once the database is back.
  expect(acknowledged.some((a) => a.started > up + 5_000)).toBe(true);
});
