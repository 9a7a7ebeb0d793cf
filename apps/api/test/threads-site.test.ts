import { loadSeed } from '@convo/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, auth, type Harness, rows } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { messageIdOf, Visitor } from './support/site.ts';

/*
 * Threads on the site (issue 41): every message of a conversation's page offers "Reply in
 * thread" and shows its thread's count and latest replies under it, the thread's own page (`/c/<slug>/m/<id>`, without JavaScript) shows its first message
 * and its replies with a form that replies in it, one level deep. Walked as a participant, a team
 * member, a visitor and another account, with an internal note's thread among them.
 */

const HOST = 'https://threads.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'threads-site-token-0123456789';

let site: PeopleSite;
let h: Harness;
let member: Visitor;
let participant: Visitor;
let first: number;
let privateFirst: number;

const sql = <T>(text: string, params: unknown[] = []) => rows<T>(h, text, params);

/** Sends the reply form of the page `v` last opened, with these fields. */
const send = (v: Visitor, fields: Record<string, string>) =>
  v.post('/c/plans', { csrf: v.hidden('csrf'), submit: v.hidden('submit'), ...fields });
/** The texts of the replies a conversation's page shows under message `root`, in order. */
const threadTexts = (html: string, root: number): string[] => {
  const at = html.indexOf(`id="message-${root}"`);
  const block = /<div class="thread-preview"[\s\S]*?<\/ol>\n<\/div>/.exec(html.slice(at))?.[0] ?? '';
  return [...block.matchAll(/<p class="text">([^<]*)<\/p>/g)].map((m) => m[1] ?? '');
};
const messageCount = async () => (await sql<{ n: number }>('select count(*)::int as n from message'))[0]?.n ?? 0;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'threads',
        name: 'Threads Co',
        host: HOST,
        owner: 'olive@threads.example',
        users: [
          { email: 'olive@threads.example', name: 'Olive Owner' },
          { email: 'tim@threads.example', name: 'Tim Teammate', team: 'member' },
          { email: 'pia@else.example', name: 'Pia Participant' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          {
            title: 'Plans',
            slug: 'plans',
            members: ['olive@threads.example', 'pia@else.example'],
            messages: [
              { author: 'olive@threads.example', text: 'Which plan suits you?' },
              { author: 'pia@else.example', text: 'Not sure yet' },
            ],
          },
          {
            title: 'Seeded',
            slug: 'seeded',
            messages: [
              { author: 'olive@threads.example', text: 'Loaded with a thread' },
              { author: 'pia@else.example', text: 'Loaded in it', thread_of: 1 },
            ],
          },
          {
            title: 'Private',
            slug: 'private',
            anyone_can_post: false,
            members: ['olive@threads.example'],
            messages: [{ author: 'olive@threads.example', text: 'Team only' }],
          },
        ],
      },
      {
        key: 'elsewhere',
        name: 'Elsewhere',
        host: OTHER_HOST,
        owner: 'yara@elsewhere.example',
        users: [{ email: 'yara@elsewhere.example', name: 'Yara Elsewhere' }],
      },
    ],
  });
  h = site.h;
  member = await signIn(site, HOST, 'tim@threads.example');
  participant = await signIn(site, HOST, 'pia@else.example');
  const ids = await sql<{ id: number; slug: string }>(
    'select min(m.id) as id, c.slug from message m join conversation c on c.id = m.conversation_id group by c.slug',
  );
  first = ids.find((r) => r.slug === 'plans')?.id ?? 0;
  privateFirst = ids.find((r) => r.slug === 'private')?.id ?? 0;
});
afterAll(async () => site?.close());

describe('a thread', () => {
  it('is loaded from a seed (an export) by its first message’s position, and refused when that is no earlier message', async () => {
    const [root] = await sql<{ id: number }>("select id from message where text = 'Loaded with a thread'");
    expect(threadTexts((await participant.get('/c/seeded')).html, root?.id ?? 0)).toEqual(['Loaded in it']);
    const before = await messageCount();
    for (const messages of [
      [{ text: 'a', thread_of: 2 }, { text: 'b' }],
      [{ text: 'a', thread_of: 1 }],
      [{ text: 'a' }, { text: 'b', thread_of: 1 }, { text: 'c', thread_of: 2 }],
    ]) {
      const seed = {
        accounts: [
          { key: `bad${messages.length}`, name: 'Bad', host: 'https://bad.example', conversations: [{ messages }] },
        ],
      };
      await expect(loadSeed(h.db.orm.em.fork(), seed), JSON.stringify(messages)).rejects.toThrow(/thread_of/);
    }
    expect(await messageCount()).toBe(before);
  });

  it('is offered under every message, and its page replies in it without JavaScript', async () => {
    const page = await participant.get('/c/plans');
    expect(page.html).toContain(`<a href="/c/plans/m/${first}">Reply in thread</a>`);
    const thread = await participant.get(`/c/plans/m/${first}`);
    expect(thread.status).toBe(200);
    expect(thread.html).toContain('Which plan suits you?');
    expect(thread.html).not.toContain('Not sure yet');
    expect(thread.html).toContain('No replies yet.');
    expect(thread.html).toContain(`<input type="hidden" name="parent" value="${first}">`);
    const posted = await send(participant, {
      parent: participant.hidden('parent'),
      text: 'The yearly one, please',
    });
    expect(posted.status).toBe(303);
    const reply = messageIdOf(posted.headers.get('location'));
    expect(posted.headers.get('location')).toBe(`/c/plans/m/${first}#message-${reply}`);
    const after = await participant.get(`/c/plans/m/${first}`);
    expect(after.html).toContain('1 reply.');
    expect(after.html).toContain('The yearly one, please');
    // A reply to the reply joins the same thread; its page is the thread's.
    await member.get(`/c/plans/m/${reply}`);
    const deeper = await send(member, {
      parent: member.hidden('parent'),
      text: 'Done: yearly it is',
    });
    expect(deeper.status).toBe(303);
    const listed = (await apiCall(h, 'GET', '/messages/get_messages?conversation_slug=plans', auth(TOKEN))).body
      .messages as { text: string; parent_message_id: number | null }[];
    expect(listed.filter((m) => m.parent_message_id === first).map((m) => m.text)).toEqual([
      'Done: yearly it is',
      'The yearly one, please',
    ]);
    // The conversation's page lists its own messages; a thread sits under its first message: its
    // count (a link to its page) and its latest replies.
    const listedPage = await participant.get('/c/plans');
    expect(listedPage.html).toContain(`<p class="thread-count"><a href="/c/plans/m/${first}">2 replies</a></p>`);
    expect(threadTexts(listedPage.html, first)).toEqual(['The yearly one, please', 'Done: yearly it is']);
    expect(listedPage.html).not.toContain('In the thread of');
  });

  it('shows its latest replies on the conversation’s page, and leads the others’ addresses to its page', async () => {
    await participant.get('/c/plans');
    const third = await send(participant, { parent: String(first), text: 'And the invoice to Pia' });
    const newest = messageIdOf(third.headers.get('location'));
    const page = await participant.get('/c/plans');
    expect(page.html).toContain(
      `<p class="thread-count"><a href="/c/plans/m/${first}">3 replies</a>, the latest 2 below</p>`,
    );
    expect(threadTexts(page.html, first)).toEqual(['Done: yearly it is', 'And the invoice to Pia']);
    expect(threadTexts(page.html, first).join()).not.toContain('The yearly one');
    // The oldest reply's message_url (#message-<id>) still lands on the page, and leads to the thread.
    const [oldest] = await sql<{ id: number }>('select min(id)::int as id from message where parent_id = ?', [first]);
    expect(page.html).toContain(
      `<p class="earlier-anchor" id="message-${oldest?.id}"><a href="/c/plans/m/${oldest?.id}#message-${oldest?.id}">`,
    );
    // The conversation counts its own messages; a live update's fragment of a reply names its thread.
    const fragment = await participant.get(`/c/plans/messages/${newest}`);
    expect(fragment.html).toMatch(
      new RegExp(`^<li data-thread="${first}"><article class="message" id="message-${newest}">`),
    );
    const again = await participant.get(`/c/plans/messages/${first}?thread=1`);
    expect(threadTexts(again.html, first)).toEqual(['Done: yearly it is', 'And the invoice to Pia']);
  });

  it('keeps its replies when its first message is deleted: they are messages of the conversation then', async () => {
    await participant.get('/c/plans');
    const root = messageIdOf((await send(participant, { text: 'A question of mine' })).headers.get('location'));
    await participant.get(`/c/plans/m/${root}`);
    await send(participant, { parent: String(root), text: 'Answered below it' });
    await participant.get('/c/plans');
    const deleted = await participant.post(`/c/plans/messages/${root}`, {
      csrf: participant.hidden('csrf'),
      action: 'delete',
    });
    expect(deleted.status).toBe(303);
    const page = await participant.get('/c/plans');
    expect(page.html).not.toContain('A question of mine');
    expect(page.html).toContain('Answered below it');
    const [row] = await sql<{ parent_id: number | null }>('select parent_id from message where text = ?', [
      'Answered below it',
    ]);
    expect(row?.parent_id).toBeNull();
  });

  it('is a note’s thread for the team alone, and its replies are notes', async () => {
    await member.get('/c/plans');
    const note = await send(member, {
      text: 'Team: she is on the trial',
      internal: 'true',
    });
    const noteId = messageIdOf(note.headers.get('location'));
    expect((await participant.get(`/c/plans/m/${noteId}`)).status).toBe(404);
    await member.get(`/c/plans/m/${noteId}`);
    const under = await send(member, {
      parent: String(noteId),
      text: 'Noted',
    });
    expect(under.status).toBe(303);
    const [row] = await sql<{ internal: boolean; parent_id: number }>(
      'select internal, parent_id from message where id = ?',
      [messageIdOf(under.headers.get('location'))],
    );
    expect(row).toEqual({ internal: true, parent_id: noteId });
    expect((await participant.get('/c/plans')).html).not.toContain('Noted');
    // Nor may a participant reply under it by naming it.
    const before = await messageCount();
    await participant.get('/c/plans');
    const forged = await send(participant, {
      parent: String(noteId),
      text: 'Me too',
    });
    expect(forged.status).toBe(422);
    expect(forged.html).toContain('That message is not in this conversation (any more)');
    expect(await messageCount()).toBe(before);
  });

  it('is not there for anyone who may not see it, nor for a message of another conversation', async () => {
    const visitor = new Visitor(h, HOST);
    for (const path of [`/c/private/m/${privateFirst}`, `/c/plans/m/${privateFirst}`, '/c/plans/m/99999999']) {
      expect((await visitor.get(path)).status, path).toBe(404);
    }
    expect((await participant.get(`/c/private/m/${privateFirst}`)).status).toBe(404);
    expect((await new Visitor(h, OTHER_HOST).get(`/c/plans/m/${first}`)).status).toBe(404);
    for (const bad of ['0', 'abc', '1e3', '99999999999']) {
      expect((await visitor.get(`/c/plans/m/${bad}`)).status, bad).toBe(404);
    }
    // A reply naming another conversation's message: refused, nothing posted.
    const before = await messageCount();
    await participant.get('/c/plans');
    for (const parent of [String(privateFirst), 'abc']) {
      const r = await participant.post('/c/plans', {
        csrf: participant.hidden('csrf'),
        submit: participant.hidden('submit'),
        parent,
        text: 'Lost',
      });
      expect(r.status, parent).toBe(422);
    }
    expect(await messageCount()).toBe(before);
  });
});
