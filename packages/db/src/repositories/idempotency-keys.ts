import type { GuardedInsert, IdempotencyGuard, NewConversation } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sha256 } from '../tokens.ts';
import { insertOne } from './conversation-writes.ts';
import { fromJson, query } from './sql.ts';

/** How long an Idempotency-Key is remembered (at least: expired keys are purged hourly, and on reuse). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

/** The condition a key past its retention meets: one place for the rule, used by reuse and purge. */
const EXPIRED = `created_at < now() - interval '${IDEMPOTENCY_RETENTION_HOURS} hours'`;

/**
 * An insert at most once per key: the key is claimed in the insert's own transaction, so a
 * concurrent request with the same key waits for this one and then finds the key used.
 */
export async function insertOnce(
  em: EntityManager,
  accountId: number,
  c: NewConversation,
  once: IdempotencyGuard,
): Promise<GuardedInsert> {
  const fingerprint = sha256(once.request);
  return em.transactional(async (tx): Promise<GuardedInsert> => {
    // A key older than its retention is free again.
    await query(tx, `delete from idempotency_key where account_id = ? and key = ? and ${EXPIRED}`, [
      accountId,
      once.key,
    ]);
    // Waits while another transaction holds the same key, then finds it taken.
    const claimed = await query(
      tx,
      'insert into idempotency_key (account_id, key, fingerprint) values (?, ?, ?) on conflict do nothing returning key',
      [accountId, once.key, fingerprint],
    );
    if (claimed.length === 0) {
      const [used] = await query<{ fingerprint: string; body: unknown }>(
        tx,
        'select fingerprint, body from idempotency_key where account_id = ? and key = ?',
        [accountId, once.key],
      );
      if (!used || used.fingerprint !== fingerprint || used.body === null) return { kind: 'key_reused' };
      return { kind: 'replay', answer: fromJson(used.body) };
    }
    const stored = await insertOne(tx, accountId, c);
    await query(tx, 'update idempotency_key set body = ? where account_id = ? and key = ?', [
      JSON.stringify(once.answer(stored)),
      accountId,
      once.key,
    ]);
    return { kind: 'stored', stored };
  });
}

/** Deletes Idempotency-Keys past their retention; returns how many. */
export async function purgeIdempotencyKeys(em: EntityManager): Promise<number> {
  const rows = await query(em, `delete from idempotency_key where ${EXPIRED} returning 1`);
  return rows.length;
}
