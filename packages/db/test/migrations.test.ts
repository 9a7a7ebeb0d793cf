import { titleKey } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../src/testing.ts';

/*
 * Migrations run on data, not only on empty schemas: the comparison-keys migration recomputes
 * every title key by the domain's rule and moves the slug index to the ASCII-only rule.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => db?.close());

const run = (sql: string, params: unknown[] = []) =>
  db.orm.em.fork().getConnection().execute(sql, params) as Promise<Record<string, unknown>[]>;

describe('the comparison-keys migration', () => {
  it('rewrites old title keys by the folding rule and indexes slugs by the ASCII rule', async () => {
    await db.orm.migrator.down({ to: 'Migration20261121065351_limits_and_idempotency' });
    const [account] = await run(
      `insert into account (key, name, host) values ('m', 'M', 'https://m.example') returning id`,
    );
    const titles = ['Straße', 'ΟΔΟΣ', 'Cafe\u0301', 'plain'];
    for (const [i, title] of titles.entries()) {
      await run(
        'insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines) values (?, ?, lower(?), ?, true, true, true)',
        [account?.id, title, title, `s-${i}`],
      );
    }
    await db.orm.migrator.up();
    const rows = await run('select title, title_key from conversation order by id');
    expect(rows.map((r) => r.title_key)).toEqual(titles.map(titleKey));
    expect(rows.map((r) => r.title_key)).toEqual(['strasse', 'οδοσ', 'café', 'plain']);
    const [index] = await run("select indexdef from pg_indexes where indexname = 'conversation_account_slug_unique'");
    expect(String(index?.indexdef)).toMatch(/lower\(\(\(slug\)::text COLLATE "C"\)\)/);
  });

  it('lets a slug lookup use that index', async () => {
    // The table is tiny, so the planner is told to prefer an index where one serves.
    const plan = await db.orm.em.fork().transactional(async (tx) => {
      const connection = tx.getConnection();
      const ctx = tx.getTransactionContext();
      await connection.execute('set local enable_seqscan = off', [], 'all', ctx);
      return connection.execute(
        `explain select id from conversation where account_id = 1 and lower(slug collate "C") = 's-1'`,
        [],
        'all',
        ctx,
      );
    });
    expect(JSON.stringify(plan)).toMatch(/conversation_account_slug_unique/);
  });
});

describe('the message-newlines migration', () => {
  it('stores replies sent with \\r\\n with \\n, and moves the change mark of the accounts it changed', async () => {
    await db.orm.migrator.down({ to: 'Migration20261124100000_webhook_lanes' });
    const [account] = await run(
      `insert into account (key, name, host) values ('nl', 'NL', 'https://nl.example') returning id`,
    );
    const [other] = await run(
      `insert into account (key, name, host) values ('nl-other', 'NL other', 'https://nl-other.example') returning id`,
    );
    const [conversation] = await run(
      'insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines) values (?, ?, ?, ?, true, true, true) returning id',
      [account?.id, 'Breaks', 'breaks', 'breaks'],
    );
    for (const text of ['one\r\ntwo\r\nthree', 'old mac\rbreak', 'plain\nalready']) {
      await run('insert into message (account_id, conversation_id, anonymous, text) values (?, ?, true, ?)', [
        account?.id,
        conversation?.id,
        text,
      ]);
    }
    const mark = async (id: unknown) =>
      Number((await run('select coalesce(sum(seq), 0) as n from account_change where account_id = ?', [id]))[0]?.n);
    const before = [await mark(account?.id), await mark(other?.id)];
    await db.orm.migrator.up();
    const rows = await run('select text from message where account_id = ? order by id', [account?.id]);
    expect(rows.map((r) => r.text)).toEqual(['one\ntwo\nthree', 'old mac\nbreak', 'plain\nalready']);
    expect(await mark(account?.id)).toBe((before[0] ?? 0) + 1);
    expect(await mark(other?.id)).toBe(before[1]);
  });
});

describe('the team-roles migration', () => {
  it("puts each account's owner on its team and makes every author a member of what they wrote in", async () => {
    await db.orm.migrator.down({ to: 'Migration20261124200000_message_newlines' });
    const [account] = await run(
      `insert into account (key, name, host) values ('tr', 'TR', 'https://tr.example') returning id`,
    );
    const [owner, writer] = await run(
      `insert into account_user (account_id, email, name) values (?, 'o@tr.example', 'O'), (?, 'w@tr.example', 'W') returning id`,
      [account?.id, account?.id],
    );
    await run('update account set owner_id = ? where id = ?', [owner?.id, account?.id]);
    const [conversation] = await run(
      'insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines) values (?, ?, ?, ?, false, true, true) returning id',
      [account?.id, 'Quiet', 'quiet', 'quiet'],
    );
    await run('insert into conversation_member (conversation_id, user_id, account_id) values (?, ?, ?)', [
      conversation?.id,
      owner?.id,
      account?.id,
    ]);
    for (const author of [writer?.id, writer?.id, null]) {
      await run(
        'insert into message (account_id, conversation_id, author_id, anonymous, text) values (?, ?, ?, ?, ?)',
        [account?.id, conversation?.id, author, author === null, 'hello'],
      );
    }
    const mark = async () =>
      Number(
        (await run('select coalesce(sum(seq), 0) as n from account_change where account_id = ?', [account?.id]))[0]?.n,
      );
    const before = await mark();
    await db.orm.migrator.up();
    const roles = await run('select email, team_role from account_user where account_id = ? order by id', [
      account?.id,
    ]);
    expect(roles).toEqual([
      { email: 'o@tr.example', team_role: 'owner' },
      { email: 'w@tr.example', team_role: null },
    ]);
    const members = await run('select user_id from conversation_member where conversation_id = ? order by user_id', [
      conversation?.id,
    ]);
    expect(members.map((m) => m.user_id)).toEqual([owner?.id, writer?.id]);
    expect(await mark()).toBe(before + 1);
    await expect(run("update account_user set team_role = 'boss' where id = ?", [owner?.id])).rejects.toThrow(
      /account_user_team_role_check/,
    );
  });
});
