import {
  type ComeBackWrites,
  type DueDigest,
  isReactionName,
  isTeamRole,
  type MailOutbox,
  type MuteKind,
  messageHtmlText,
  NOTIFY_MAX_MESSAGES,
  type NotificationStore,
  reactionEmoji,
  type SiteAccount,
  UNVERIFIED_NAME_SUFFIX,
  type UnconfirmedStart,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type RawBuilder, sql } from 'kysely';
import { intakePageNameSql, startedOnIntakeSql } from './conversation-reads.ts';
import { MailBatch } from './mail-outbox.ts';
import { PgPeopleStore } from './people-store.ts';
import { db, rowsOf } from './query.ts';
import { fromJson, query } from './sql.ts';

/*
 * Notifications in three tables (migration notifications): notify_event, one row per posted
 * message, written in the message's own statement (notifyEvents), or per counted play (the play
 * store's statement) or reaction added (the reaction store's); notification_digest, one pending mail per person and conversation; and the
 * mutes and follows that decide who gets one.
 */

/** The insert of a `with` (named `notify_ev`): a notify_event for each message `source` wrote. */
export const notifyEvents = (
  source: string,
  c: {
    account: RawBuilder<number>;
    conversation: RawBuilder<number>;
    message: RawBuilder<number>;
    author: RawBuilder<number | null>;
    /** An intake start's address to mail a link back to (UnconfirmedStart); null for any other message. */
    comeBack?: RawBuilder<string | null>;
  },
) =>
  db
    .insertInto('notify_event')
    .columns(['account_id', 'conversation_id', 'message_id', 'author_id', 'come_back_email'])
    .expression(
      rowsOf(source).select([
        c.account.as('account_id'),
        c.conversation.as('conversation_id'),
        c.message.as('message_id'),
        c.author.as('author_id'),
        (c.comeBack ?? sql<string | null>`null::varchar`).as('come_back_email'),
      ]),
    );

/** Whether a person stopped a kind of mail (`'all'`, `'plays'`) about a conversation, or about all of the account's. */
const mutedSql = (account: string, user: string, conversation: string, kind: string) =>
  `exists (select 1 from notification_mute mu where mu.account_id = ${account} and mu.user_id = ${user}
           and mu.conversation_id in (0, ${conversation}) and mu.kind = '${kind}')`;

/**
 * Who is told of a message: the conversation's members, and its followers while it is public;
 * never its author, nor anyone who muted the conversation or all of the account's mail; of an
 * internal note, only those on the account's team. Of a play (`play_id`): the played message's
 * author alone, unless they stopped play notices too; of a reaction (`reaction_id`), its author alone.
 */
const FAN_OUT = `
  with ev as (
    delete from notify_event where id in (select id from notify_event order by id limit ? for update skip locked)
    returning account_id, conversation_id, message_id, author_id, play_id, reaction_id, come_back_email,
      play_id is null and reaction_id is null as posted
  ),
  told as (
    select ev.account_id, ev.conversation_id, r.user_id,
      min(ev.message_id) filter (where ev.posted) as first_message_id, min(ev.play_id) as first_play_id,
      min(ev.reaction_id) as first_reaction_id,
      bool_or(ev.posted and ${startedOnIntakeSql('c', 'ev.message_id')}) as started
    from ev
    join conversation c on c.id = ev.conversation_id and c.account_id = ev.account_id
    join lateral (
      select cm.user_id from conversation_member cm
      where cm.conversation_id = c.id and cm.account_id = c.account_id and ev.posted
      union
      select f.user_id from conversation_follower f
      where f.conversation_id = c.id and f.account_id = c.account_id and c.anyone_can_post and ev.posted
      union
      select pm.author_id from message pm
      where pm.id = ev.message_id and pm.account_id = c.account_id and not ev.posted and pm.author_id is not null
    ) r on true
    where r.user_id is distinct from ev.author_id
      and (not exists (select 1 from message im where im.id = ev.message_id and im.internal)
           or exists (select 1 from account_user tu where tu.id = r.user_id and tu.team_role is not null))
      and not ${mutedSql('ev.account_id', 'r.user_id', 'ev.conversation_id', 'all')}
      and (ev.play_id is null or not ${mutedSql('ev.account_id', 'r.user_id', 'ev.conversation_id', 'plays')})
    group by 1, 2, 3
  ),
  pending as (
    insert into notification_digest (conversation_id, user_id, account_id, first_message_id, first_play_id,
      first_reaction_id, due_at)
    select conversation_id, user_id, account_id, first_message_id, first_play_id, first_reaction_id,
      -- A conversation a visitor just started is news at once; what follows waits for the batch.
      case when started then now() else now() + make_interval(secs => ?::float8) end from told
    -- A pending mail takes what comes while it waits: messages, plays and reactions, whichever came first.
    on conflict (conversation_id, user_id) do update set
      first_message_id = coalesce(notification_digest.first_message_id, excluded.first_message_id),
      first_play_id = coalesce(notification_digest.first_play_id, excluded.first_play_id),
      first_reaction_id = coalesce(notification_digest.first_reaction_id, excluded.first_reaction_id),
      due_at = least(notification_digest.due_at, excluded.due_at)
  )
  select (select count(*)::int from ev) as n,
    -- The starts under an address nobody confirmed, whose visitor is mailed a link back (still there).
    (select coalesce(json_agg(json_build_object('account_id', a.id, 'account_name', a.name, 'host', a.host,
       'key', a.key, 'slug', c.slug, 'message_id', m.id, 'email', ev.come_back_email,
       'name', coalesce(m.claimed_name, ''))), '[]'::json)
     from ev join account a on a.id = ev.account_id
       join conversation c on c.id = ev.conversation_id and c.account_id = ev.account_id
       join message m on m.id = ev.message_id and m.account_id = ev.account_id
     where ev.come_back_email is not null) as come_backs`;

/** The account as a mail's links need it, from a row's `account_id`, `account_name`, `host`, `key`. */
const siteAccount = (r: { account_id: number; account_name: string; host: string; key: string }): SiteAccount => ({
  id: r.account_id,
  name: r.account_name,
  host: r.host,
  key: r.key,
});

interface ComeBackRow {
  account_id: number;
  account_name: string;
  host: string;
  key: string;
  slug: string;
  message_id: number;
  email: string;
  name: string;
}

/** The due mails taken (and removed) in the caller's transaction. */
const TAKE_DUE = `
  delete from notification_digest where (conversation_id, user_id) in (
    select conversation_id, user_id from notification_digest where due_at <= now()
    order by due_at limit ? for update skip locked)
  returning conversation_id, user_id, account_id, first_message_id, first_play_id, first_reaction_id`;

/**
 * The reactions a taken mail tells (`r`, its message `m`, who reacted `ru`): on the recipient's own
 * messages, since its first, still there, never their own.
 */
const REACTIONS_SINCE = `from message_reaction r join message m on m.id = r.message_id and m.account_id = r.account_id
  left join account_user ru on ru.id = r.user_id
  where r.conversation_id = c.id and r.account_id = c.account_id and r.id >= d.first_reaction_id
    and m.author_id = u.id and m.hidden_at is null and r.user_id is distinct from u.id`;

/**
 * The plays a taken mail tells (`p`, its message `m`, its viewer `pu`): of the recipient's own
 * messages, since its first, unless they stopped play notices since.
 */
const PLAYS_SINCE = `from message_play p join message m on m.id = p.message_id and m.account_id = p.account_id
  left join account_user pu on pu.id = p.viewer_id
  where p.conversation_id = c.id and p.account_id = c.account_id and p.id >= d.first_play_id
    and m.author_id = u.id and m.hidden_at is null
    and not ${mutedSql('d.account_id', 'd.user_id', 'd.conversation_id', 'plays')}`;

/**
 * Everything the taken mails tell, in one statement: account, conversation, recipient, and the
 * messages since each mail's first (not the recipient's own) and the plays of theirs, unless the
 * recipient muted it or left it since.
 */
const DIGESTS = `
  select d.conversation_id, d.user_id, a.id as account_id, a.name as account_name, a.host, a.key,
    c.title, c.slug, c.anyone_can_post, u.name as user_name, u.email,
    case when ${startedOnIntakeSql('c', 'd.first_message_id')} then coalesce(${intakePageNameSql('c')}, 'an intake page')
      end as started_via,
    (select count(*)::int from message m where m.conversation_id = c.id and m.account_id = c.account_id
       and m.id >= d.first_message_id and m.author_id is distinct from u.id and m.hidden_at is null
       and (not m.internal or u.team_role is not null)) as total,
    coalesce((select json_agg(x order by x.created_us, x.id) from (
       select m.id, coalesce(au.name, m.claimed_name || '${UNVERIFIED_NAME_SUFFIX.replaceAll("'", "''")}') as author_name, au.team_role as author_team, m.text, m.format, m.message_type, m.poster, m.internal, m.parent_id,
         (extract(epoch from m.created_at) * 1000000)::bigint::text as created_us
       from message m left join account_user au on au.id = m.author_id
       where m.conversation_id = c.id and m.account_id = c.account_id and m.id >= d.first_message_id
         and m.author_id is distinct from u.id and m.hidden_at is null
         -- An internal note is told to the team alone, whatever mail it falls in.
         and (not m.internal or u.team_role is not null)
       order by m.created_at, m.id limit ${NOTIFY_MAX_MESSAGES}) x), '[]'::json) as messages,
    (select count(*)::int ${PLAYS_SINCE}) as total_plays,
    coalesce((select json_agg(x order by x.id) from (
       select p.id, case when p.viewer_id is not null then coalesce(nullif(pu.name, ''), 'Someone') end as viewer_name,
         m.id as message_id, m.message_type, m.text, m.format, m.parent_id,
         (extract(epoch from p.played_at) * 1000000)::bigint::text as played_us
       ${PLAYS_SINCE}
       order by p.id limit ${NOTIFY_MAX_MESSAGES}) x), '[]'::json) as plays,
    (select count(*)::int ${REACTIONS_SINCE}) as total_reactions,
    coalesce((select json_agg(x order by x.id) from (
       select r.id, case when r.user_id is not null then coalesce(nullif(ru.name, ''), 'Someone') end as reactor_name,
         r.reaction, m.id as message_id, m.text, m.format, m.parent_id,
         (extract(epoch from r.created_at) * 1000000)::bigint::text as created_us
       ${REACTIONS_SINCE}
       order by r.id limit ${NOTIFY_MAX_MESSAGES}) x), '[]'::json) as reactions
  from jsonb_to_recordset(?::jsonb) as d(conversation_id int, user_id int, account_id int, first_message_id int,
    first_play_id bigint, first_reaction_id bigint)
  join account a on a.id = d.account_id
  join conversation c on c.id = d.conversation_id and c.account_id = d.account_id
  join account_user u on u.id = d.user_id and u.account_id = d.account_id
  where not ${mutedSql('d.account_id', 'd.user_id', 'd.conversation_id', 'all')}
    -- Still told now: a member, or a follower while it is public (nobody taken out since reads on).
    and (exists (select 1 from conversation_member cm where cm.conversation_id = c.id and cm.user_id = u.id)
         or (c.anyone_can_post and exists (select 1 from conversation_follower f
                                           where f.conversation_id = c.id and f.user_id = u.id)))`;

interface DigestRow {
  conversation_id: number;
  user_id: number;
  account_id: number;
  account_name: string;
  host: string;
  key: string;
  title: string;
  slug: string;
  anyone_can_post: boolean;
  user_name: string;
  email: string;
  started_via: string | null;
  total: number;
  messages: unknown;
  total_plays: number;
  plays: unknown;
  total_reactions: number;
  reactions: unknown;
}

interface ReactionRow {
  reactor_name: string | null;
  reaction: string;
  message_id: number;
  text: string;
  format: string;
  parent_id: number | null;
  created_us: string;
}

interface PlayRow {
  viewer_name: string | null;
  message_id: number;
  message_type: string;
  text: string;
  format: string;
  parent_id: number | null;
  played_us: string;
}

interface MessageRow {
  id: number;
  author_name: string | null;
  author_team: string | null;
  text: string;
  format: string;
  message_type: string;
  poster: boolean;
  internal: boolean;
  parent_id: number | null;
  created_us: string;
}

const digest = (r: DigestRow): DueDigest => ({
  account: siteAccount(r),
  conversation: { id: r.conversation_id, title: r.title, slug: r.slug, anyoneCanPost: r.anyone_can_post },
  recipient: { id: r.user_id, name: r.user_name, email: r.email },
  startedVia: r.started_via,
  total: r.total,
  messages: fromJson<MessageRow[]>(r.messages).map((m) => ({
    id: m.id,
    authorName: m.author_name,
    authorTeamRole: m.author_name !== null && isTeamRole(m.author_team) ? m.author_team : null,
    // A message kept as HTML is mailed as its words.
    text: m.format === 'html' ? messageHtmlText(m.text) : m.text,
    messageType: m.message_type,
    createdAt: BigInt(m.created_us),
    poster: m.poster,
    internal: m.internal === true,
    parentId: m.parent_id,
  })),
  totalPlays: r.total_plays,
  plays: fromJson<PlayRow[]>(r.plays).map((p) => ({
    viewerName: p.viewer_name,
    messageId: p.message_id,
    messageType: p.message_type,
    text: p.format === 'html' ? messageHtmlText(p.text) : p.text,
    playedAt: BigInt(p.played_us),
    parentId: p.parent_id,
  })),
  totalReactions: r.total_reactions,
  reactions: fromJson<ReactionRow[]>(r.reactions).flatMap((x) =>
    isReactionName(x.reaction)
      ? [
          {
            reactorName: x.reactor_name,
            emoji: reactionEmoji(x.reaction),
            messageId: x.message_id,
            text: x.format === 'html' ? messageHtmlText(x.text) : x.text,
            createdAt: BigInt(x.created_us),
            parentId: x.parent_id,
          },
        ]
      : [],
  ),
});

export class PgNotificationStore implements NotificationStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async fanOut(
    limit: number,
    batchSeconds: number,
    comeBack: (start: UnconfirmedStart, writes: ComeBackWrites) => Promise<void>,
  ): Promise<number> {
    return this.em.transactional(async (tx) => {
      const [row] = await query<{ n: number; come_backs: unknown }>(tx, FAN_OUT, [limit, batchSeconds]);
      const starts = fromJson<ComeBackRow[]>(row?.come_backs ?? []);
      if (starts.length > 0) {
        const writes = { people: new PgPeopleStore(tx), outbox: new MailBatch() };
        for (const r of starts) {
          await comeBack(
            { account: siteAccount(r), slug: r.slug, messageId: r.message_id, email: r.email, name: r.name },
            writes,
          );
        }
        await writes.outbox.write(tx);
      }
      return row?.n ?? 0;
    });
  }

  async takeDue(limit: number, send: (digest: DueDigest, outbox: MailOutbox) => Promise<void>): Promise<number> {
    return this.em.transactional(async (tx) => {
      const taken = await query<object>(tx, TAKE_DUE, [limit]);
      if (taken.length === 0) return 0;
      const rows = await query<DigestRow>(tx, DIGESTS, [JSON.stringify(taken)]);
      const outbox = new MailBatch();
      // A mail with nothing left to tell (the messages were the recipient's own, or were removed) is dropped.
      for (const row of rows)
        if (row.total > 0 || row.total_plays > 0 || row.total_reactions > 0) await send(digest(row), outbox);
      await outbox.write(tx);
      return taken.length;
    });
  }

  async mute(accountId: number, userId: number, conversationId: number | null, kind: MuteKind): Promise<void> {
    await query(
      this.em,
      'insert into notification_mute (account_id, user_id, conversation_id, kind) values (?, ?, ?, ?) on conflict do nothing',
      [accountId, userId, conversationId ?? 0, kind],
    );
  }

  async unmute(accountId: number, userId: number, conversationId: number | null, kind: MuteKind): Promise<void> {
    await query(
      this.em,
      'delete from notification_mute where account_id = ? and user_id = ? and conversation_id = ? and kind = ?',
      [accountId, userId, conversationId ?? 0, kind],
    );
  }

  async follow(accountId: number, userId: number, conversationId: number): Promise<void> {
    await query(
      this.em,
      `insert into conversation_follower (conversation_id, user_id, account_id)
       select id, ?, account_id from conversation where id = ? and account_id = ? on conflict do nothing`,
      [userId, conversationId, accountId],
    );
  }

  async unfollow(accountId: number, userId: number, conversationId: number): Promise<void> {
    await query(
      this.em,
      'delete from conversation_follower where account_id = ? and user_id = ? and conversation_id = ?',
      [accountId, userId, conversationId],
    );
  }

  async mailState(accountId: number, userId: number, conversationId: number) {
    const [row] = await query<{
      member: boolean;
      following: boolean;
      muted: boolean;
      muted_all: boolean;
      plays_muted: boolean;
      plays_muted_all: boolean;
    }>(
      this.em,
      `with k (a, u, c) as (select ?::int, ?::int, ?::int)
       select
         exists (select 1 from conversation_member where account_id = k.a and user_id = k.u and conversation_id = k.c) as member,
         exists (select 1 from conversation_follower where account_id = k.a and user_id = k.u and conversation_id = k.c) as following,
         exists (select 1 from notification_mute where account_id = k.a and user_id = k.u and conversation_id = k.c and kind = 'all') as muted,
         exists (select 1 from notification_mute where account_id = k.a and user_id = k.u and conversation_id = 0 and kind = 'all') as muted_all,
         exists (select 1 from notification_mute where account_id = k.a and user_id = k.u and conversation_id = k.c and kind = 'plays') as plays_muted,
         exists (select 1 from notification_mute where account_id = k.a and user_id = k.u and conversation_id = 0 and kind = 'plays') as plays_muted_all
       from k`,
      [accountId, userId, conversationId],
    );
    return {
      member: row?.member ?? false,
      following: row?.following ?? false,
      muted: row?.muted ?? false,
      mutedAll: row?.muted_all ?? false,
      playsMuted: row?.plays_muted ?? false,
      playsMutedAll: row?.plays_muted_all ?? false,
    };
  }
}
