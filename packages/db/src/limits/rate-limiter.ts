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
 * The next block is claimed when a quarter of the one in hand is left, so requests do not queue
 * behind the claim: when they all waited for it, every thousandth request held up every request
 * in flight for a pool connection and a statement (the p99 at 64 connections was 2.8x the
 * hand-written server's).
 * Windows are aligned on the database's clock, so processes on different machines agree.
 *
 * A row's window only moves forward. `now()` is when a statement's transaction began, so a claim
 * that began just before a window's end can reach the row after another process has moved it on
 * into the next window; such a late claim counts in the row's window. Were it to move the row
 * back, the next claim would start the new window's count again from nothing.
 */

/** The start of the current window of `seconds` (an SQL expression), aligned on the database's clock. */
export const windowStartSql = (seconds: string): string =>
  `date_bin(make_interval(secs => ${seconds}::float8), now(), timestamptz '2000-01-01')`;

/**
 * The upsert's update of a window's row (aliased `b`) by `n` more: counted in the row's window
 * when the row is already there or ahead (a late statement), else the count starts again.
 */
export const countInWindowSql = (n: string): string =>
  `used = case when b.window_start >= excluded.window_start then b.used + ${n} else ${n} end,
    window_start = greatest(b.window_start, excluded.window_start)`;

/**
 * The statement that claims n requests of a key's window when they fit under the limit, or finds
 * the row that refused them. `columns` are the row's key (the conflict target) and what else it
 * stores, given as $1…; then come the window in seconds, n and the limit.
 */
export function blockClaimSql(table: string, columns: readonly string[]): string {
  const at = (i: number) => `$${columns.length + i}`;
  const [key] = columns;
  return `
  with claim as (
    insert into ${table} as b (${columns.join(', ')}, window_start, used)
    values (${columns.map((_, i) => `$${i + 1}`).join(', ')},
            ${windowStartSql(at(1))}, ${at(2)})
    on conflict (${key}) do update set ${countInWindowSql('excluded.used')}
    where b.window_start < excluded.window_start or b.used + excluded.used <= ${at(3)}
    returning used, window_start
  )
  select c.used, true as granted,
    ceil(extract(epoch from c.window_start - now()) * 1000 + ${at(1)}::float8 * 1000)::int as reset_ms
  from claim c
  union all
  select b.used, false,
    ceil(extract(epoch from b.window_start - now()) * 1000 + ${at(1)}::float8 * 1000)::int
  from ${table} b
  where b.${key} = $1 and not exists (select 1 from claim)`;
}

const CLAIM: Prepared = {
  name: 'rate_limit_claim',
  text: blockClaimSql('rate_limit_bucket', ['token_id', 'account_id']),
};

export interface ClaimRow {
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
/** A block of this many or more is claimed again when a quarter of it is left. */
const PREFETCH_FROM = 4;
/**
 * Two claims whose windows end further apart than this are in different windows (a window is a
 * second at least; the same window's ends differ by the claims' latency).
 */
const SAME_WINDOW_MS = 500;

/** The block a claim asks for: a fiftieth of the limit, at least one request, at most 1,000. */
const blockOf = (limit: number): number => Math.max(1, Math.min(MAX_BLOCK, Math.floor(limit / BLOCKS_PER_WINDOW)));

/** Claims n more of the key's window if they fit under the limit, or returns the row that refused. */
type Claim<K, X> = (key: K, n: number, limit: number, extra: X) => Promise<ClaimRow>;

/**
 * Quotas per key, spent locally from blocks claimed in the database (`claimRow`); `extra` is
 * whatever else the claim's statement needs of the key.
 */
export class BlockQuota<K, X = undefined> {
  private readonly buckets = new Map<K, Bucket>();
  private readonly claimRow: Claim<K, X>;

  constructor(claimRow: Claim<K, X>) {
    this.claimRow = claimRow;
  }

  /** Spends one request of the key's quota; null when the limit is 0 (no limit). */
  async take(key: K, limit: number, extra: X): Promise<RateLimitState | null> {
    if (limit <= 0) return null;
    for (;;) {
      const now = Date.now();
      let bucket = this.buckets.get(key);
      if (!bucket || (now >= bucket.windowEnds && !bucket.claiming) || bucket.limit !== limit) {
        bucket = { limit, windowEnds: 0, claimed: 0, left: 0, exhausted: false };
        this.buckets.set(key, bucket);
      }
      const resetSeconds = Math.max(1, Math.ceil((bucket.windowEnds - now) / 1000));
      // What is left of a window that has ended is not spent in the next one.
      const current = now < bucket.windowEnds;
      if (bucket.left > 0 && current) {
        bucket.left--;
        const block = blockOf(limit);
        if (block >= PREFETCH_FROM && bucket.left <= block / 4 && !bucket.claiming && !bucket.exhausted) {
          // The next block is claimed while this one lasts. Whoever runs out before it comes waits
          // for it, and its failure reaches them; nobody else waits on it.
          this.startClaim(key, bucket, extra).catch(() => undefined);
        }
        return { allowed: true, limit, remaining: Math.max(0, limit - bucket.claimed + bucket.left), resetSeconds };
      }
      if (bucket.exhausted && current) return { allowed: false, limit, remaining: 0, resetSeconds };
      await (bucket.claiming ?? this.startClaim(key, bucket, extra));
    }
  }

  private startClaim(key: K, bucket: Bucket, extra: X): Promise<void> {
    const claiming = this.claim(key, bucket, extra).finally(() => {
      bucket.claiming = undefined;
    });
    bucket.claiming = claiming;
    return claiming;
  }

  private async claim(key: K, bucket: Bucket, extra: X): Promise<void> {
    let n = blockOf(bucket.limit);
    let row = await this.claimRow(key, n, bucket.limit, extra);
    if (!row.granted && n > 1) {
      n = 1;
      row = await this.claimRow(key, n, bucket.limit, extra);
    }
    const windowEnds = Date.now() + row.reset_ms;
    // Counted in a later window than what is left here (a claim made ahead of need, answered
    // after the window turned): what is left belongs to the window before, and is dropped.
    if (windowEnds > bucket.windowEnds + SAME_WINDOW_MS) bucket.left = 0;
    bucket.windowEnds = windowEnds;
    bucket.claimed = row.used;
    if (row.granted) bucket.left += n;
    else bucket.exhausted = true;
  }

  /** Drops the buckets of windows that have ended (call now and then: a long-lived process meets many keys). */
  sweep(): void {
    const now = Date.now();
    for (const [key, bucket] of this.buckets)
      if (now >= bucket.windowEnds && !bucket.claiming) this.buckets.delete(key);
  }
}

export class RateLimiter {
  private readonly policy: RateLimitPolicy;
  /** Keyed by token, with its account for the claim's row. */
  private readonly quota: BlockQuota<number, number>;

  constructor(em: EntityManager, policy: RateLimitPolicy) {
    this.policy = policy;
    this.quota = new BlockQuota(async (tokenId, n, limit, accountId) => {
      const [row] = await runPrepared<ClaimRow>(em, CLAIM, [tokenId, accountId, policy.windowSeconds, n, limit]);
      // The statement either claims (and returns the row) or finds the row that refused it.
      if (!row) throw new Error('rate limit claim returned no row');
      return row;
    });
  }

  /** Spends one request of the token's quota; null when the token is not limited at all. */
  take(tokenId: number, accountId: number, accountLimit: number | null): Promise<RateLimitState | null> {
    return this.quota.take(tokenId, accountLimit ?? this.policy.limit, accountId);
  }

  /** Drops the buckets of windows that have ended. */
  sweep(): void {
    this.quota.sweep();
  }
}
