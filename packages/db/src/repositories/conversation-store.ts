import type { ConversationStore } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { findOne, findOneJson, listPage } from './conversation-reads.ts';
import { insertOne } from './conversation-writes.ts';
import { insertOnce } from './idempotency-keys.ts';

/**
 * The domain's ConversationStore on MikroORM's connection: reads (conversation-reads.ts), writes
 * (conversation-writes.ts) and creates guarded by an Idempotency-Key (idempotency-keys.ts), each
 * bound to the connection.
 */
export const conversationStore = (em: EntityManager): ConversationStore => ({
  findOne: (accountId, criteria) => findOne(em, accountId, criteria),
  findOneView: (account, criteria) => findOneJson(em, account, criteria),
  listPage: (account, window) => listPage(em, account, window),
  insert: (accountId, conversation) => insertOne(em, accountId, conversation),
  insertOnce: (accountId, conversation, once) => insertOnce(em, accountId, conversation, once),
});
