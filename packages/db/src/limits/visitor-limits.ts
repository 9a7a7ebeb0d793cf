import type { VisitorLimits } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Prepared, runPrepared } from '../repositories/prepared.ts';
import { BlockQuota, blockClaimSql, type ClaimRow, countInWindowSql, windowStartSql } from './rate-limiter.ts';

/*
 * Rate limits for the sites' forms, keyed by a client address or an e-mail address, over fixed
 * windows aligned on the database's clock that only move forward (as the API tokens' limiter's):
 * one statement counts the submission and answers whether it fits, so every process shares the
 * count. Forms are posted by people, not machines, so a row written per submission costs nothing
 * worth batching.
 */
const TAKE: Prepared = {
  name: 'visitor_rate_limit_take',
  text: `
  insert into visitor_rate_limit as b (key, window_start, used)
  values ($1, ${windowStartSql('$2')}, 1)
  on conflict (key) do update set ${countInWindowSql('1')}
  returning used, ceil(extract(epoch from window_start - now()) * 1000 + $2::float8 * 1000)::int as reset_ms`,
};

export class PgVisitorLimits implements VisitorLimits {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async take(key: string, limit: number, windowSeconds: number): Promise<{ allowed: boolean; resetSeconds: number }> {
    if (limit <= 0) return { allowed: true, resetSeconds: 0 };
    const [row] = await runPrepared<{ used: number; reset_ms: number }>(this.em, TAKE, [
      key.slice(0, 400),
      windowSeconds,
    ]);
    return {
      allowed: (row?.used ?? 0) <= limit,
      resetSeconds: Math.max(1, Math.ceil((row?.reset_ms ?? windowSeconds * 1000) / 1000)),
    };
  }
}

/*
 * Page reads per client address: too many for a row written per request, so each process claims
 * blocks of an address's quota in one statement (as the API tokens' limiter does) and spends them
 * locally; every process together never serves an address more than its limit in a window.
 */
const CLAIM_READS: Prepared = { name: 'visitor_read_limit_claim', text: blockClaimSql('visitor_rate_limit', ['key']) };

export class PgReadLimits {
  private readonly quota: BlockQuota<string, number>;

  constructor(em: EntityManager) {
    this.quota = new BlockQuota<string, number>(async (key, n, limit, windowSeconds) => {
      const [row] = await runPrepared<ClaimRow>(em, CLAIM_READS, [key, windowSeconds, n, limit]);
      if (!row) throw new Error('read limit claim returned no row');
      return row;
    });
  }

  /** One read by `key` (a client address, prefixed by its account); allowed while within `limit` a window. */
  async take(key: string, limit: number, windowSeconds: number): Promise<{ allowed: boolean; resetSeconds: number }> {
    const state = await this.quota.take(`read:${key}`.slice(0, 400), limit, windowSeconds);
    return state ? { allowed: state.allowed, resetSeconds: state.resetSeconds } : { allowed: true, resetSeconds: 0 };
  }

  /** Drops the quotas of windows that have ended. */
  sweep(): void {
    this.quota.sweep();
  }
}
