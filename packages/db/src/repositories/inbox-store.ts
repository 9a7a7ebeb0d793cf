import type { InboxRow, InboxStore, PageWindow } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Prepared, runPrepared } from './prepared.ts';
import { query } from './sql.ts';

/*
 * The team's inbox: one statement a page. The page's rows come in the order of the index
 * conversation_account_activity (account, last activity, id), filtered by what the reader may see,
 * a tag and a part of the title; only the 51 rows kept are read further (tags, count, read mark).
 * $1 account, $2 reader, $3 whether the reader sees every conversation, $4 tag key or null,
 * $5 title part or null, $6 limit (one more than the page), $7 offset.
 */
const PAGE: Prepared = {
  name: 'inbox_page',
  text: `
  with page as (
    select c.id, c.title, c.slug, c.anyone_can_post, c.last_activity_at
    from conversation c
    where c.account_id = $1
      and (c.anyone_can_post or $3::bool
           or exists (select 1 from conversation_member cm where cm.conversation_id = c.id and cm.user_id = $2))
      and ($4::text is null or exists (
            select 1 from conversation_tag ct join tag t on t.id = ct.tag_id and t.account_id = ct.account_id
            where ct.conversation_id = c.id and ct.account_id = c.account_id and lower(t.name) = $4::text))
      and ($5::text is null or strpos(c.title_key, $5::text) > 0)
    order by c.last_activity_at desc, c.id desc
    limit $6 offset $7
  )
  select p.id, p.title, p.slug, p.anyone_can_post,
    (extract(epoch from p.last_activity_at) * 1000000)::bigint::text as activity_us,
    (select count(*)::int from message m where m.conversation_id = p.id and m.account_id = $1 and m.hidden_at is null)
      as message_count,
    coalesce((select array_agg(t.name order by t.id) from conversation_tag ct join tag t on t.id = ct.tag_id
              where ct.conversation_id = p.id and ct.account_id = $1), '{}') as tags,
    coalesce((select r.read_at < p.last_activity_at from conversation_read r
              where r.user_id = $2 and r.conversation_id = p.id), true) as unread
  from page p
  order by p.last_activity_at desc, p.id desc`,
};

const TAG_NAMES: Prepared = {
  name: 'inbox_tag_names',
  text: 'select name from tag where account_id = $1 order by lower(name) limit 500',
};

interface Row {
  id: number;
  title: string;
  slug: string;
  anyone_can_post: boolean;
  activity_us: string;
  message_count: number;
  tags: string[];
  unread: boolean;
}

const row = (r: Row): InboxRow => ({
  id: r.id,
  title: r.title,
  slug: r.slug,
  anyoneCanPost: r.anyone_can_post,
  lastActivityAt: BigInt(r.activity_us),
  messageCount: r.message_count,
  tags: r.tags,
  unread: r.unread,
});

export class PgInboxStore implements InboxStore {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async page(
    accountId: number,
    reader: { userId: number; seesAll: boolean },
    filter: { tagKey: string | null; titlePart: string | null },
    window: PageWindow,
  ) {
    const rows = await runPrepared<Row>(this.em, PAGE, [
      accountId,
      reader.userId,
      reader.seesAll,
      filter.tagKey,
      filter.titlePart,
      window.limit + 1,
      window.offset,
    ]);
    return { rows: rows.slice(0, window.limit).map(row), hasMore: rows.length > window.limit };
  }

  async tagNames(accountId: number): Promise<string[]> {
    return (await runPrepared<{ name: string }>(this.em, TAG_NAMES, [accountId])).map((r) => r.name);
  }

  async markRead(accountId: number, userId: number, conversationId: number): Promise<void> {
    await query(
      this.em,
      `insert into conversation_read (user_id, conversation_id, account_id) values (?, ?, ?)
       on conflict (user_id, conversation_id) do update set read_at = now()`,
      [userId, conversationId, accountId],
    );
  }
}
