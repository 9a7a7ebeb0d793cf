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
