import type {
  ConversationRecord,
  ConversationStore,
  LookupCriteria,
  NewConversation,
  OnceOnly,
  OnceOnlyInsert,
  PageWindow,
  StoredConversation,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { findOne, listPage } from './conversation-reads.ts';
import { insertOne } from './conversation-writes.ts';
import { insertOnce } from './idempotency-keys.ts';

/**
 * The domain's ConversationStore on MikroORM's connection: reads (conversation-reads.ts), writes
 * (conversation-writes.ts) and creates guarded by an Idempotency-Key (idempotency-keys.ts).
 */
export class MikroConversationStore implements ConversationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  findOne(accountId: number, criteria: LookupCriteria): Promise<ConversationRecord | null> {
    return findOne(this.em, accountId, criteria);
  }

  listPage(accountId: number, window: PageWindow): Promise<{ records: ConversationRecord[]; hasMore: boolean }> {
    return listPage(this.em, accountId, window);
  }

  insert(accountId: number, c: NewConversation): Promise<StoredConversation> {
    return insertOne(this.em, accountId, c);
  }

  insertOnce(accountId: number, c: NewConversation, once: OnceOnly): Promise<OnceOnlyInsert> {
    return insertOnce(this.em, accountId, c, once);
  }
}
