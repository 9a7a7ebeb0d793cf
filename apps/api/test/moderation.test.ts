import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, BASE, call, type Harness, REST } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { Visitor } from './support/site.ts';

/*
 * Moderation: the team hides a message (it leaves the page, the embeds and the API, the webhooks
 * hear message_hidden, the change mark moves) and shows it again; an author deletes their own
 * message within 15 minutes, and nobody else's.
 */

const HOST = 'https://mod.example.com';
const TOKEN = 'mod-site-token-0123456789';

let site: PeopleSite;
let h: Harness;

beforeAll(async () => {
  site = await openPeopleSite(
    {
      accounts: [
        {
          key: 'mod',
          name: 'Mod',
          host: HOST,
          owner: 'olivia@mod.example',
          users: [
            { email: 'olivia@mod.example', name: 'Olivia Owner' },
            { email: 'paul@else.example', name: 'Paul Participant' },
          ],
          tokens: [{ name: 'tests', token: TOKEN }],
          conversations: [
            {
              title: 'Open',
              slug: 'open',
              messages: [
                { author: 'olivia@mod.example', text: 'Welcome', created_at: '2024-01-01T00:00:00Z' },
                { author: 'paul@else.example', text: 'An old word of mine', created_at: '2024-01-02T00:00:00Z' },
                { author: null, text: 'Buy cheap things', created_at: '2024-01-03T00:00:00Z' },
              ],
            },
          ],
        },
      ],
    },
    { services: { webhookTargets: { allowHttp: true, allowPrivate: true } } },
  );
  h = site.h;
  const hook = await call(
    h,
    new Request(`${BASE}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...auth(TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['message_hidden'] }),
    }),
  );
  expect(hook.status).toBe(201);
});
afterAll(async () => site?.close());

const get = (headers: Record<string, string> = {}) =>
  call(h, new Request(`${REST}/get_conversation?slug=open`, { headers: { ...auth(TOKEN), ...headers } }));
const texts = async () => ((await get()).body as { messages: { text: string }[] }).messages.map((m) => m.text);
const idOf = async (text: string) =>
  ((await get()).body as { messages: { id: number; text: string }[] }).messages.find((m) => m.text === text)?.id;

const signedIn = (email: string) => signIn(site, HOST, email);

/** Does the team's inbox find the conversation by these words? (What is hidden is not searched.) */
const searchFinds = async (words: string) => {
  const page = await (await signedIn('olivia@mod.example')).get(`/?q=${encodeURIComponent(words)}`);
  expect(page.status).toBe(200);
  return page.html.includes('href="/c/open"');
};

const act = async (v: Visitor, id: number | undefined, action: string) => {
  await v.get('/c/open');
  return v.post(`/c/open/messages/${id}`, { csrf: v.hidden('csrf'), action });
};

describe('hiding', () => {
  it('takes a message out of the page, the embed and the API, tells the webhooks, and moves the mark', async () => {
    const spam = await idOf('Buy cheap things');
    const etag = (await get()).headers.get('etag') ?? '';
    const olivia = await signedIn('olivia@mod.example');
    const hidden = await act(olivia, spam, 'hide');
    expect(hidden.status).toBe(303);
    expect(await texts()).toEqual(['Welcome', 'An old word of mine']);
    expect((await get({ 'if-none-match': etag })).status).toBe(200);
    expect((await new Visitor(h, HOST).get('/c/open')).html).not.toContain('Buy cheap things');
    expect((await new Visitor(h, HOST).get('/embeds/conversations/mod/open')).html).not.toContain('Buy cheap things');
    expect((await new Visitor(h, HOST).get(`/embeds/messages/mod/${spam}`)).status).toBe(404);
    const events = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute("select message_id from webhook_event where type = 'message_hidden'")) as { message_id: number }[];
    expect(events.map((e) => e.message_id)).toEqual([spam]);
    // The team still sees it, to show it again.
    const page = await olivia.get('/c/open');
    expect(page.html).toContain('Hidden messages');
    expect(page.html).toContain('Buy cheap things');
    // Hiding it twice changes nothing more.
    expect((await act(olivia, spam, 'hide')).status).toBe(404);
    // The inbox's search no longer finds its words; the others' still.
    expect(await searchFinds('cheap')).toBe(false);
    expect(await searchFinds('old word')).toBe(true);
  });

  it('shows it again', async () => {
    const olivia = await signedIn('olivia@mod.example');
    const spam = (
      (await h.db.orm.em.fork().getConnection().execute("select id from message where text = 'Buy cheap things'")) as {
        id: number;
      }[]
    )[0]?.id;
    expect(await searchFinds('cheap')).toBe(false);
    expect((await act(olivia, spam, 'show')).status).toBe(303);
    expect(await texts()).toContain('Buy cheap things');
    expect(await searchFinds('cheap things')).toBe(true);
  });

  it('is refused to a participant (403) and to a visitor who is not signed in (404)', async () => {
    const spam = await idOf('Buy cheap things');
    const paul = await signedIn('paul@else.example');
    expect((await act(paul, spam, 'hide')).status).toBe(403);
    expect((await act(new Visitor(h, HOST), spam, 'hide')).status).toBe(404);
    expect(await texts()).toContain('Buy cheap things');
  });
});

describe("deleting one's own message", () => {
  it('lets the author delete a new message of theirs, and nothing else', async () => {
    const paul = await signedIn('paul@else.example');
    expect((await paul.reply('open', { text: 'Oops, wrong thread' })).status).toBe(303);
    expect(await searchFinds('oops')).toBe(true);
    const page = await paul.get('/c/open');
    expect(page.html).toContain('Delete my message');
    const fresh = await idOf('Oops, wrong thread');
    expect((await act(paul, await idOf('Welcome'), 'delete')).status).toBe(403);
    expect((await act(paul, await idOf('An old word of mine'), 'delete')).status).toBe(403);
    const etag = (await get()).headers.get('etag') ?? '';
    expect((await act(paul, fresh, 'delete')).status).toBe(303);
    expect(await texts()).not.toContain('Oops, wrong thread');
    expect(await searchFinds('oops')).toBe(false);
    expect((await get({ 'if-none-match': etag })).status).toBe(200);
  });

  it('refuses what is not a message or an action', async () => {
    const olivia = await signedIn('olivia@mod.example');
    expect((await act(olivia, 99_999_999, 'hide')).status).toBe(404);
    await olivia.get('/c/open');
    expect((await olivia.post('/c/open/messages/abc', { csrf: olivia.hidden('csrf'), action: 'hide' })).status).toBe(
      404,
    );
    await olivia.get('/c/open');
    expect((await olivia.post('/c/open/messages/1', { csrf: olivia.hidden('csrf'), action: 'burn' })).status).toBe(400);
  });
});
