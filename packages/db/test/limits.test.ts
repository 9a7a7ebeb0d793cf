import type { EntityManager } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, PgReadLimits, PgVisitorLimits, RateLimiter, windowStartSql } from '../src/index.ts';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * The limits' rows as several processes leave them. A statement's `now()` is when its transaction
 * began, so a claim that began just before a window's end can reach the row after another process
 * has already moved it into the next window. The tests put the row there (one window ahead, its
 * quota spent) and send the late claim: it must count in the row's window and leave it where it is,
 * or the next window's count would start again from nothing and serve its limit twice.
 */

const WINDOW_S = 60;
let db: TestDatabase;
let em: EntityManager;
let tokenId: number;
let accountId: number;

beforeAll(async () => {
  db = await openTestDatabase();
  em = db.orm.em.fork();
  const account = await createAccount(em, { key: 'limits', name: 'Limits', host: 'limits.example.com' });
  accountId = account.id;
  tokenId = account.token.id;
});
afterAll(async () => {
  await db?.close();
});

const execute = (sql: string, params: unknown[] = []) => em.getConnection().execute(sql, params);
/** The start of the window after the current one, as the limiters compute windows. */
const NEXT_WINDOW = `${windowStartSql(`${WINDOW_S}`)} + make_interval(secs => ${WINDOW_S})`;
const windowOf = async (table: string, where: string, param: unknown) => {
  const [row] = await execute(`select used, window_start > now() as ahead from ${table} where ${where} = ?`, [param]);
  return row as { used: number; ahead: boolean };
};

describe('a claim that reaches a row already in the next window', () => {
  it("counts in that window against a token's limit", async () => {
    await execute(
      `insert into rate_limit_bucket (token_id, account_id, window_start, used) values (?, ?, ${NEXT_WINDOW}, 5)`,
      [tokenId, accountId],
    );
    const state = await new RateLimiter(em, { limit: 5, windowSeconds: WINDOW_S }).take(tokenId, accountId, null);
    expect(state?.allowed).toBe(false);
    expect(await windowOf('rate_limit_bucket', 'token_id', tokenId)).toEqual({ used: 5, ahead: true });
  });

  it("counts in that window against a page reader's limit", async () => {
    await execute(
      `insert into visitor_rate_limit (key, window_start, used) values ('read:192.0.2.1', ${NEXT_WINDOW}, 2)`,
    );
    const limits = new PgReadLimits(em);
    expect((await limits.take('192.0.2.1', 3, WINDOW_S)).allowed).toBe(true);
    expect((await limits.take('192.0.2.1', 3, WINDOW_S)).allowed).toBe(false);
    expect(await windowOf('visitor_rate_limit', 'key', 'read:192.0.2.1')).toEqual({ used: 3, ahead: true });
  });

  it("counts in that window against a form's limit", async () => {
    await execute(
      `insert into visitor_rate_limit (key, window_start, used) values ('form:192.0.2.2', ${NEXT_WINDOW}, 2)`,
    );
    const limits = new PgVisitorLimits(em);
    expect((await limits.take('form:192.0.2.2', 2, WINDOW_S)).allowed).toBe(false);
    expect(await windowOf('visitor_rate_limit', 'key', 'form:192.0.2.2')).toEqual({ used: 3, ahead: true });
  });
});

describe('a block of quota in hand', () => {
  const usedOf = async (token: number) =>
    ((await execute('select used from rate_limit_bucket where token_id = ?', [token]))[0] as { used: number }).used;
  const freshToken = async (key: string) => {
    const account = await createAccount(em, { key, name: key, host: `${key}.example.com` });
    return { token: account.token.id, account: account.id };
  };

  it('is claimed again before it runs out, so no request waits for the claim', async () => {
    const { token, account } = await freshToken('limits-ahead');
    // A limit of 1,000 claims blocks of 20; the next is claimed when 5 are left.
    const limiter = new RateLimiter(em, { limit: 1_000, windowSeconds: WINDOW_S });
    for (let i = 0; i < 14; i++) expect((await limiter.take(token, account, null))?.allowed).toBe(true);
    expect(await usedOf(token)).toBe(20);
    expect((await limiter.take(token, account, null))?.remaining).toBe(1_000 - 15);
    // The 15th left 5 in hand and sent the next claim; it lands while those 5 are still there.
    await expect.poll(() => usedOf(token)).toBe(40);
    const states = [];
    for (let i = 0; i < 5; i++) states.push(await limiter.take(token, account, null));
    expect(states.every((s) => s?.allowed)).toBe(true);
    expect(states.at(-1)?.remaining).toBe(1_000 - 20);
  });

  it('is not spent in the next window when its claim was counted there', async () => {
    const { token, account } = await freshToken('limits-turn');
    const limiter = new RateLimiter(em, { limit: 200, windowSeconds: WINDOW_S });
    // Blocks of 4: the first take claims 4 and leaves 3, the second leaves 2...
    expect((await limiter.take(token, account, null))?.allowed).toBe(true);
    // ...but meanwhile the row moved on a window, as another process's claim after the turn
    // would leave it, with the next window's quota all but spent.
    await execute(`update rate_limit_bucket set window_start = ${NEXT_WINDOW}, used = 196 where token_id = ?`, [token]);
    // The take that leaves one in hand claims the next block ahead; it is counted in the row's
    // window, the later one, so what was left of the earlier window is dropped with it.
    expect((await limiter.take(token, account, null))?.allowed).toBe(true);
    expect((await limiter.take(token, account, null))?.allowed).toBe(true);
    await expect.poll(() => usedOf(token)).toBe(200);
    // In hand now: the 4 of the later window's claim, and nothing of the earlier one's.
    const served = [];
    for (let i = 0; i < 8; i++) served.push((await limiter.take(token, account, null))?.allowed);
    expect(served).toEqual([true, true, true, true, false, false, false, false]);
  });
});
