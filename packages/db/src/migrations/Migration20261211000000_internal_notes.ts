import { Migration } from '@mikro-orm/migrations';
import { LIVE_EVENT_SELECTS, liveEventFunction } from './Migration20261129000000_live_events.ts';
import { WATCHED_ACCOUNTS } from './Migration20261130100000_live_watch.ts';

/** The message functions' events with the message's `internal` beside each (the other functions write false). */
const MESSAGE_EVENT_SELECTS = {
  live_message_posted: `select account_id, conversation_id, 'posted', id, author_id, internal from new_rows order by id`,
  live_message_changed: `select n.account_id, n.conversation_id, case when n.hidden_at is null then 'shown' else 'hidden' end, n.id, null::int, n.internal
          from new_rows n join old_rows o on o.id = n.id
          where (o.hidden_at is null) <> (n.hidden_at is null) order by n.id`,
  live_message_deleted: `select account_id, conversation_id, 'deleted', id, null::int, internal from old_rows order by id`,
};

/** A message function as live_watch made it, writing `internal` too. */
export const withInternal = (name: string, events: string) =>
  liveEventFunction(name, events, WATCHED_ACCOUNTS).replace(
    'insert into live_event (account_id, conversation_id, kind, message_id, user_id)',
    'insert into live_event (account_id, conversation_id, kind, message_id, user_id, internal)',
  );

/**
 * Internal notes: a message only the account's team sees (`internal`). The live feed marks the
 * events of one, so a stream of anyone else never carries them.
 */
export class Migration20261211000000_internal_notes extends Migration {
  override name = 'Migration20261211000000_internal_notes';

  override async up(): Promise<void> {
    this.addSql('alter table "message" add column "internal" boolean not null default false;');
    this.addSql('alter table "live_event" add column "internal" boolean not null default false;');
    for (const [name, events] of Object.entries(MESSAGE_EVENT_SELECTS)) this.addSql(withInternal(name, events));
  }

  override async down(): Promise<void> {
    for (const name of Object.keys(MESSAGE_EVENT_SELECTS) as (keyof typeof LIVE_EVENT_SELECTS)[]) {
      this.addSql(liveEventFunction(name, LIVE_EVENT_SELECTS[name], WATCHED_ACCOUNTS));
    }
    this.addSql('alter table "live_event" drop column "internal";');
    this.addSql('alter table "message" drop column "internal";');
  }
}
