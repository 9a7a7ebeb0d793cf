import type { RateLimitState } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Prepared, runPrepared } from '../repositories/prepared.ts';

/*
 * Per-token rate limiting over fixed windows, shared by every process through PostgreSQL.
 *
 * A process does not write a row per request: it claims a block of the token's quota (a fiftieth
 * of the limit, at most 1,000 requests) in one statement and spends it locally. The statement only
 * grants a block that still fits under the limit, so whatever the number of processes the token
 * is never served more than its limit in a window; a process that holds unspent quota when the
 * window ends only makes others refuse a little early. Near the limit blocks shrink to one request.
 * Windows are aligned on the database's clock, so processes on different machines agree.
 */

const CLAIM: Prepared = {
  name: 'rate_limit_claim',
  text: `
  with claim as (
    insert into rate_limit_bucket as b (token_id, account_id, window_start, used)
    values ($1, $2, date_bin(make_interval(secs => $3::float8), now(), timestamptz '2000-01-01'), $4)
    on conflict (token_id) do update set
      used = case when b.window_start = excluded.window_start then b.used + excluded.used else excluded.used end,
      window_start = excluded.window_start
    where b.window_start <> excluded.window_start or b.used + excluded.used <= $5
    returning used, window_start
  )
  select c.used, true as granted,
    ceil(extract(epoch from c.window_start - now()) * 1000 + $3::float8 * 1000)::int as reset_ms
  from claim c
  union all
  select b.used, false,
    ceil(extract(epoch from b.window_start - now()) * 1000 + $3::float8 * 1000)::int
  from rate_limit_bucket b
  where b.token_id = $1 and not exists (select 1 from claim)`,
};

interface ClaimRow {
  used: number;
  granted: boolean;
  reset_ms: number;
}

export interface RateLimitPolicy {
  /** Requests per window for a token whose account sets no limit of its own; 0 turns limiting off. */
  limit: number;
  windowSeconds: number;
}

interface Bucket {
  limit: number;
  windowEnds: number;
  /** Requests claimed by all processes in this window, as of this process's last claim. */
  claimed: number;
  /** Claimed by this process and not yet spent. */
  left: number;
  /** Set when not even one request could be claimed: refuse locally until the window ends. */
  exhausted: boolean;
  claiming?: Promise<void> | undefined;
}

const MAX_BLOCK = 1_000;
const BLOCKS_PER_WINDOW = 50;

export class RateLimiter {
  private readonly buckets = new Map<number, Bucket>();
  private readonly em: EntityManager;
  private readonly policy: RateLimitPolicy;

  constructor(em: EntityManager, policy: RateLimitPolicy) {
    this.em = em;
    this.policy = policy;
  }

  /** Spends one request of the token's quota; null when the token is not limited at all. */
  async take(tokenId: number, accountId: number, accountLimit: number | null): Promise<RateLimitState | null> {
    const limit = accountLimit ?? this.policy.limit;
    if (limit <= 0) return null;
    for (;;) {
      const now = Date.now();
      let bucket = this.buckets.get(tokenId);
      if (!bucket || (now >= bucket.windowEnds && !bucket.claiming) || bucket.limit !== limit) {
        bucket = { limit, windowEnds: 0, claimed: 0, left: 0, exhausted: false };
        this.buckets.set(tokenId, bucket);
      }
      const resetSeconds = Math.max(1, Math.ceil((bucket.windowEnds - now) / 1000));
      if (bucket.left > 0) {
        bucket.left--;
        return { allowed: true, limit, remaining: Math.max(0, limit - bucket.claimed + bucket.left), resetSeconds };
      }
      if (bucket.exhausted) return { allowed: false, limit, remaining: 0, resetSeconds };
      if (!bucket.claiming) {
        const b = bucket;
        b.claiming = this.claim(tokenId, accountId, b).finally(() => {
          b.claiming = undefined;
        });
      }
      await bucket.claiming;
    }
  }

  private async claim(tokenId: number, accountId: number, bucket: Bucket): Promise<void> {
    let n = Math.max(1, Math.min(MAX_BLOCK, Math.floor(bucket.limit / BLOCKS_PER_WINDOW)));
    let row = await this.claimRow(tokenId, accountId, n, bucket.limit);
    if (!row.granted && n > 1) {
      n = 1;
      row = await this.claimRow(tokenId, accountId, n, bucket.limit);
    }
    bucket.windowEnds = Date.now() + row.reset_ms;
    bucket.claimed = row.used;
    if (row.granted) bucket.left += n;
    else bucket.exhausted = true;
  }

  private async claimRow(tokenId: number, accountId: number, n: number, limit: number): Promise<ClaimRow> {
    const [row] = await runPrepared<ClaimRow>(this.em, CLAIM, [
      tokenId,
      accountId,
      this.policy.windowSeconds,
      n,
      limit,
    ]);
    // The statement either claims (and returns the row) or finds the row that refused it.
    if (!row) throw new Error('rate limit claim returned no row');
    return row;
  }

  /** Drops the buckets of windows that have ended (call now and then: a long-lived process meets many tokens). */
  sweep(): void {
    const now = Date.now();
    for (const [id, bucket] of this.buckets) if (now >= bucket.windowEnds && !bucket.claiming) this.buckets.delete(id);
  }
}
