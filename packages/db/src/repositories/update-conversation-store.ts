import type {
  AccountContext,
  ConversationChanges,
  ConversationView,
  UpdateConversationStore,
  WireJson,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { updateConversationJson } from './conversation-reads.ts';

export class PgUpdateConversationStore implements UpdateConversationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async updateConversation(
    at: Pick<AccountContext, 'id' | 'host' | 'key'>,
    id: number,
    changes: ConversationChanges,
  ): Promise<WireJson<ConversationView> | null> {
    return updateConversationJson(this.em, at, id, changes);
  }
}
