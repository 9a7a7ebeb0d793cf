import type { KnownReplyAddress, ReceivedOutcome, ReplyAddressStore } from '@convo/domain';
import { isTeamRole } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { query } from './sql.ts';

/*
 * Reply addresses (issue 44): found by their token's hash (or, for a reply that lost the address,
 * by the Message-ID of the mail they rode in and the person's address), and the mails taken in at
 * each, one row per Message-ID, so the same mail is acted on once on every replica.
 */

interface AddressRow {
  id: number;
  account_id: number;
  account_key: string;
  account_name: string;
  host: string;
  user_id: number;
  email: string;
  team_role: string | null;
  conversation_id: number | null;
  slug: string | null;
  parent_id: number | null;
  expired: boolean;
}

const SELECT = `select r.id, r.account_id, a.key as account_key, a.name as account_name, a.host,
    r.user_id, u.email, u.team_role, r.conversation_id, c.slug, r.parent_id, r.expires_at < now() as expired
  from reply_address r
  join account a on a.id = r.account_id
  join account_user u on u.id = r.user_id and u.account_id = r.account_id
  left join conversation c on c.id = r.conversation_id and c.account_id = r.account_id`;

const known = (row: AddressRow | undefined): KnownReplyAddress | null =>
  row
    ? {
        id: row.id,
        account: { id: row.account_id, key: row.account_key, name: row.account_name, host: row.host },
        userId: row.user_id,
        email: row.email,
        teamRole: row.team_role !== null && isTeamRole(row.team_role) ? row.team_role : null,
        conversationId: row.conversation_id ?? 0,
        // A deleted conversation: a slug no page has, so posting finds nothing and says so.
        slug: row.slug ?? '',
        parentId: row.parent_id,
        expired: row.expired,
      }
    : null;

export class PgReplyAddressStore implements ReplyAddressStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async byToken(tokenHash: string): Promise<KnownReplyAddress | null> {
    const [row] = await query<AddressRow>(this.em, `${SELECT} where r.token_hash = ?`, [tokenHash]);
    return known(row);
  }

  async byMessageIds(messageIds: readonly string[], from: string): Promise<KnownReplyAddress | null> {
    // Newest first: a reply's References name the whole chain of our mails.
    const [row] = await query<AddressRow>(
      this.em,
      `${SELECT} where r.message_id in (select jsonb_array_elements_text(?::jsonb)) and lower(u.email) = ?
       order by r.id desc limit 1`,
      // As one JSON parameter: the ORM's execute() would spread an array into a list of values.
      [JSON.stringify(messageIds.slice(0, 50).map((m) => m.slice(0, 255))), from],
    );
    return known(row);
  }

  async receive(address: KnownReplyAddress, messageKey: string, maxUses: number): Promise<'new' | 'seen' | 'used_up'> {
    // One statement: the mail's row, and the use counted only when the row is new and a use is left.
    const [row] = await query<{ taken: boolean; counted: boolean }>(
      this.em,
      `with taken as (
         insert into inbound_mail (reply_address_id, message_key, account_id, outcome) values (?, ?, ?, 'taken')
         on conflict do nothing returning 1),
       counted as (
         update reply_address set uses = uses + 1 where id = ? and uses < ? and exists (select 1 from taken) returning 1)
       select exists (select 1 from taken) as taken, exists (select 1 from counted) as counted`,
      [address.id, messageKey, address.account.id, address.id, maxUses],
    );
    if (!row?.taken) return 'seen';
    return row.counted ? 'new' : 'used_up';
  }

  async settle(address: KnownReplyAddress, messageKey: string, outcome: ReceivedOutcome['kind']): Promise<void> {
    if (outcome === 'later') {
      await query(this.em, 'delete from inbound_mail where reply_address_id = ? and message_key = ?', [
        address.id,
        messageKey,
      ]);
      await query(this.em, 'update reply_address set uses = greatest(uses - 1, 0) where id = ?', [address.id]);
      return;
    }
    await query(this.em, 'update inbound_mail set outcome = ? where reply_address_id = ? and message_key = ?', [
      outcome,
      address.id,
      messageKey,
    ]);
  }

  async bounced(address: KnownReplyAddress): Promise<boolean> {
    const rows = await query(
      this.em,
      `update reply_address set bounced_at = now()
       where id = ? and (bounced_at is null or bounced_at < now() - interval '1 hour') returning id`,
      [address.id],
    );
    return rows.length > 0;
  }

  /**
   * The hourly purge: addresses a month past their end (until then a late answer is told it
   * expired; after, it is refused as unknown), and mails taken in over a week ago (a relay's
   * retries are over by then).
   */
  async purge(): Promise<void> {
    await query(this.em, "delete from reply_address where expires_at < now() - interval '30 days'");
    await query(this.em, "delete from inbound_mail where created_at < now() - interval '7 days'");
  }
}
