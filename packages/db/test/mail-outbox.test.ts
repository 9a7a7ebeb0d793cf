import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_MAX_ATTEMPTS, MailBatch, PgMailOutbox, vacuumChurningTables } from '../src/index.ts';
import { CLAIM_DUE_MAIL } from '../src/repositories/mail-outbox.ts';
import { query } from '../src/repositories/sql.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * The mail queue as its workers take it: the mail due longest first, whatever order it was
 * queued in, each taken by one worker until its lease runs out, given up after its last attempt.
 */

let db: TestDatabase;
let outbox: PgMailOutbox;
let account: number;

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  query<T>(db.orm.em.fork(), text, params);

/** Queues a mail to `to`, due `minutes` from now (negative: overdue). */
async function queued(to: string, minutes: number, attempts = 0): Promise<void> {
  await sql(
    `insert into outgoing_mail (account_id, recipient, subject, body, next_attempt_at, attempts)
     values (?, ?, 'Hi', 'A link', now() + make_interval(mins => ?), ?)`,
    [account, to, minutes, attempts],
  );
}

beforeAll(async () => {
  db = await openTestDatabase();
  outbox = new PgMailOutbox(db.orm.em.fork());
  const [made] = await sql<{ id: number }>(
    `insert into account (key, name, host) values ('mail', 'Mail', 'https://mail.example') returning id`,
  );
  account = made?.id ?? 0;
});
afterAll(async () => db?.close());

describe('the mail queue', () => {
  it('gives the mails due longest, then those queued first; a taken or given-up one to nobody', async () => {
    await queued('new@mail.example', 0);
    await queued('later@mail.example', 30);
    await queued('retried@mail.example', -45, 2);
    await queued('newer@mail.example', 0);
    await queued('given-up@mail.example', -90, MAIL_MAX_ATTEMPTS);
    expect((await outbox.claimDue(1)).map((m) => m.recipient)).toEqual(['retried@mail.example']);
    expect((await outbox.claimDue(1)).map((m) => m.recipient)).toEqual(['new@mail.example']);
    // Taken: their next attempt moved out, so another worker takes the next one.
    expect((await outbox.claimDue(10)).map((m) => m.recipient)).toEqual(['newer@mail.example']);
    expect(await outbox.claimDue(10)).toEqual([]);
  });

  it('writes a batch of mails together, each as it was queued, and none when its transaction fails', async () => {
    const mail = (n: number) => ({
      to: `batch${n}@mail.example`,
      subject: `Mail ${n}`,
      text: `Body ${n}`,
      ...(n === 1 ? { html: '<p>Body 1</p>', headers: { 'List-Unsubscribe': '<https://mail.example/u>' } } : {}),
    });
    const batch = new MailBatch();
    for (const n of [1, 2, 3]) await batch.enqueue(account, mail(n));
    const queued = () =>
      sql<{ recipient: string; subject: string; body: string; html: string | null; headers: unknown }>(
        `select recipient, subject, body, html, headers from outgoing_mail where recipient like 'batch%' order by id`,
      );
    expect(await queued()).toEqual([]);
    const failed = new MailBatch();
    await failed.enqueue(account, mail(9));
    await expect(
      db.orm.em.fork().transactional(async (tx) => {
        await failed.write(tx);
        throw new Error('the round failed');
      }),
    ).rejects.toThrow('the round failed');
    await db.orm.em.fork().transactional((tx) => batch.write(tx));
    expect(await queued()).toEqual([
      {
        recipient: 'batch1@mail.example',
        subject: 'Mail 1',
        body: 'Body 1',
        html: '<p>Body 1</p>',
        headers: { 'List-Unsubscribe': '<https://mail.example/u>' },
      },
      { recipient: 'batch2@mail.example', subject: 'Mail 2', body: 'Body 2', html: null, headers: null },
      { recipient: 'batch3@mail.example', subject: 'Mail 3', body: 'Body 3', html: null, headers: null },
    ]);
  });

  it('queues a subject cut through an emoji at 255 characters, the half left as U+FFFD', async () => {
    await outbox.enqueue(account, { to: 'cut@mail.example', subject: `${'x'.repeat(254)}\u{1F600}`, text: 'Hi' });
    const [row] = await sql<{ subject: string }>(
      `select subject from outgoing_mail where recipient = 'cut@mail.example'`,
    );
    expect(row?.subject).toBe(`${'x'.repeat(254)}\uFFFD`);
  });

  it('takes ten of 5,000 waiting mails off the due index, once the queue tables are analyzed', async () => {
    await sql(
      `insert into outgoing_mail (account_id, recipient, subject, body)
       select ?, 'waiting' || n || '@mail.example', 'Hi', 'A link' from generate_series(1, 5000) n`,
      [account],
    );
    // What a server without autovacuum gets from the service's own rounds (apps/api workers/vacuum.ts).
    await vacuumChurningTables(db.orm.em.fork(), { analyze: true });
    const [row] = await sql<{ 'QUERY PLAN': unknown }>(`explain (format json) ${CLAIM_DUE_MAIL}`, [
      MAIL_MAX_ATTEMPTS,
      10,
    ]);
    const plan = JSON.stringify(row?.['QUERY PLAN']);
    // Without statistics the planner took `sent_at is null` for 0.5 % of the queue: a bitmap scan of
    // every due mail, sorted for the first ten (8 ms at 8,000, against 0.1 ms off the index).
    expect(plan).toContain('"Index Name":"outgoing_mail_due"');
    expect(plan).not.toContain('"Node Type":"Sort"');
    expect(plan).not.toContain('Bitmap');
  });
});
