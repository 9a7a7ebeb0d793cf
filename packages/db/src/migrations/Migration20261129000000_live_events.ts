import { Migration } from '@mikro-orm/migrations';

/**
 * What each trigger function writes: the events of its statement's transition table, in order
 * (Migration20261130100000_live_watch makes the functions again around the same selects).
 */
export const LIVE_EVENT_SELECTS = {
  live_message_posted: `select account_id, conversation_id, 'posted', id, author_id from new_rows order by id`,
  live_message_changed: `select n.account_id, n.conversation_id, case when n.hidden_at is null then 'shown' else 'hidden' end, n.id, null::int
          from new_rows n join old_rows o on o.id = n.id
          where (o.hidden_at is null) <> (n.hidden_at is null) order by n.id`,
  live_message_deleted: `select account_id, conversation_id, 'deleted', id, null::int from old_rows order by id`,
  live_member_added: `select account_id, conversation_id, 'member_added', null::int, user_id from new_rows order by conversation_id, user_id`,
  live_member_removed: `select account_id, conversation_id, 'member_removed', null::int, user_id from old_rows order by conversation_id, user_id`,
  live_session_ended: `select distinct account_id, null::int, 'signed_out', null::int, user_id from old_rows`,
  live_team_changed: `select n.account_id, null::int, 'team_changed', null::int, n.id from new_rows n join old_rows o on o.id = n.id
          where o.team_role is distinct from n.team_role order by n.id`,
};

/**
 * One function a change: each reads the statement's transition table and writes its events in id
 * order, then tells the listeners which accounts they are of (`told` picks them from `written`;
 * here, all of them).
 */
export const liveEventFunction = (
  name: string,
  events: string,
  told = 'select string_agg(distinct account_id::text, \',\') into accounts from written',
) => `create or replace function "${name}"() returns trigger language plpgsql as $$
      declare accounts text;
      begin
        if current_setting('convo.quiet', true) = 'on' then return null; end if;
        with written as (
          insert into live_event (account_id, conversation_id, kind, message_id, user_id)
          ${events}
          returning account_id)
        ${told};
        if accounts is not null then
          perform pg_notify('convo_live', case when length(accounts) > 7000 then '*' else accounts end);
        end if;
        return null;
      end $$;`;

/**
 * Live conversations. Every change a reader of a conversation would see (a message posted, hidden,
 * shown again or deleted; a member added or taken out) and every change to who may see it (a
 * session ended, a team role changed) becomes a `live_event` row, written by a trigger in the
 * statement that made the change, whichever door it came through; then `pg_notify('convo_live',
 * <account ids>)` wakes the listening processes, which read the rows (the payload only says which
 * accounts to care about).
 *
 * A row's position is (xid, id): the writing transaction's id and the row's. Readers take only
 * rows whose transaction is older than every transaction still running (pg_snapshot_xmin), in
 * that order, so no row can later appear before one already read: a stream resumed from a
 * position misses nothing. Seeds set `convo.quiet` for their transaction: history loaded is not
 * live news. The rows are kept a day (the hourly purge), and `live_purged` remembers how far it went.
 */
export class Migration20261129000000_live_events extends Migration {
  override name = 'Migration20261129000000_live_events';

  override async up(): Promise<void> {
    this.addSql(`create table "live_event" (
      "id" bigint generated always as identity primary key,
      "xid" xid8 not null default pg_current_xact_id(),
      "account_id" int not null,
      "conversation_id" int null,
      "kind" varchar(16) not null,
      "message_id" int null,
      "user_id" int null,
      "created_at" timestamptz(6) not null default now());`);
    this.addSql(`create index "live_event_position" on "live_event" ("xid", "id");`);
    this.addSql(
      `create index "live_event_conversation" on "live_event" ("conversation_id", "xid", "id") where "conversation_id" is not null;`,
    );
    this.addSql(`create index "live_event_created" on "live_event" ("created_at");`);
    // The newest position the purge has deleted: a stream resuming from before it may have missed
    // something, and starts again from its page instead.
    this.addSql(`create table "live_purged" (
      "one" boolean primary key default true check ("one"),
      "xid" xid8 not null,
      "event_id" bigint not null);`);
    for (const [name, events] of Object.entries(LIVE_EVENT_SELECTS)) this.addSql(liveEventFunction(name, events));
    const trigger = (name: string, on: string, table: string, transition: string, fn: string) =>
      `create trigger "${name}" after ${on} on "${table}" referencing ${transition} for each statement execute function "${fn}"();`;
    this.addSql(trigger('message_live_posted', 'insert', 'message', 'new table as new_rows', 'live_message_posted'));
    this.addSql(
      trigger(
        'message_live_changed',
        'update',
        'message',
        'old table as old_rows new table as new_rows',
        'live_message_changed',
      ),
    );
    this.addSql(trigger('message_live_deleted', 'delete', 'message', 'old table as old_rows', 'live_message_deleted'));
    this.addSql(
      trigger('member_live_added', 'insert', 'conversation_member', 'new table as new_rows', 'live_member_added'),
    );
    this.addSql(
      trigger('member_live_removed', 'delete', 'conversation_member', 'old table as old_rows', 'live_member_removed'),
    );
    this.addSql(
      trigger('session_live_ended', 'delete', 'site_session', 'old table as old_rows', 'live_session_ended'),
    );
    this.addSql(
      trigger(
        'user_live_team_changed',
        'update',
        'account_user',
        'old table as old_rows new table as new_rows',
        'live_team_changed',
      ),
    );
  }

  override async down(): Promise<void> {
    for (const [table, trigger] of [
      ['message', 'message_live_posted'],
      ['message', 'message_live_changed'],
      ['message', 'message_live_deleted'],
      ['conversation_member', 'member_live_added'],
      ['conversation_member', 'member_live_removed'],
      ['site_session', 'session_live_ended'],
      ['account_user', 'user_live_team_changed'],
    ]) {
      this.addSql(`drop trigger "${trigger}" on "${table}";`);
    }
    for (const fn of [
      'live_message_posted',
      'live_message_changed',
      'live_message_deleted',
      'live_member_added',
      'live_member_removed',
      'live_session_ended',
      'live_team_changed',
    ]) {
      this.addSql(`drop function "${fn}"();`);
    }
    this.addSql('drop table "live_purged";');
    this.addSql('drop table "live_event";');
  }
}
