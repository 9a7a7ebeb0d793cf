import type {
  AccountContext,
  ConversationChanges,
  UpdateConversationStore,
  UpdatedConversationView,
  WireJson,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { deleteConversationRow, updateConversationJson } from './conversation-reads.ts';
import { db, first, sameAddress } from './query.ts';

export class PgUpdateConversationStore implements UpdateConversationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async updateConversation(
    at: Pick<AccountContext, 'id' | 'host' | 'key'>,
    id: number,
    changes: ConversationChanges,
  ): Promise<WireJson<UpdatedConversationView> | null> {
    return updateConversationJson(this.em, at, id, changes);
  }

  async teamMemberId(accountId: number, email: string): Promise<number | null> {
    const row = await first(
      this.em,
      db
        .selectFrom('account_user')
        .select('id')
        .where('account_id', '=', accountId)
        .where('team_role', 'is not', null)
        .where(sameAddress('email', email)),
    );
    return row?.id ?? null;
  }

  deleteConversation(accountId: number, id: number): Promise<{ mediaKeys: string[] } | null> {
    return deleteConversationRow(this.em, accountId, id);
  }
}
