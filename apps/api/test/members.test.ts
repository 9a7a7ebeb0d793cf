import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, BASE, call, type Harness, REST } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { elements, present, textOf, Visitor } from './support/site.ts';

/*
 * A conversation's members, changed through the API (REST and tRPC) and by the team on the page:
 * who shows in `users` at once, who is told by mail, who may then open a private conversation, and
 * the change mark (ETag) that moves with every change and only then.
 */

const HOST = 'https://guild.example.com';
const TOKEN = 'guild-site-token-0123456789';

let site: PeopleSite;
let h: Harness;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'guild',
        name: 'Guild',
        host: HOST,
        owner: 'olivia@guild.example',
        users: [
          { email: 'olivia@guild.example', name: 'Olivia Owner' },
          { email: 'tom@guild.example', name: 'Tom Teammate', team: 'member' },
          { email: 'kim@else.example', name: 'Kim Known' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          { title: 'Closed', slug: 'closed', anyone_can_post: false, members: ['olivia@guild.example'] },
          { title: 'Open', slug: 'open', members: ['olivia@guild.example', 'tom@guild.example'] },
          { title: 'Latest', slug: 'latest' },
        ],
      },
    ],
  });
  h = site.h;
});
afterAll(async () => site?.close());

const post = (operation: string, body: unknown) =>
  call(
    h,
    new Request(`${REST}/${operation}`, {
      method: 'POST',
      headers: { ...auth(TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
const get = (slug: string, headers: Record<string, string> = {}) =>
  call(
    h,
    new Request(`${REST}/get_conversation?slug=${slug}`, {
      headers: { ...auth(TOKEN), ...headers },
    }),
  );
const emails = (body: any): string[] => body.users.map((u: { email: string }) => u.email);

const signedIn = (email: string) => signIn(site, HOST, email);

describe('the API', () => {
  it('adds a new person by e-mail and name: in users at once, told by mail, and the private conversation opens to them', async () => {
    const etag = present((await get('closed')).headers.get('etag'));
    const added = await post('add_conversation_member', {
      slug: 'CLOSED',
      email: 'nell@new.example',
      name: 'Nell New',
    });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ slug: 'closed', title: 'Closed' });
    expect(emails(added.body)).toEqual(['olivia@guild.example', 'nell@new.example']);
    expect((await get('closed', { 'if-none-match': etag })).status).toBe(200);

    const invitation = await site.mailbox.next('nell@new.example');
    expect(invitation.text).toContain('You were added to the conversation "Closed" on Guild.');
    expect(invitation.text).toContain(`${HOST}/c/closed`);

    const nell = await signedIn('nell@new.example');
    const page = await nell.get('/c/closed');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Nell New');
  });

  it('adds a known person without a name; adding again changes nothing and mails nobody', async () => {
    const added = await post('add_conversation_member', { slug: 'closed', email: 'KIM@else.example' });
    expect(added.status).toBe(200);
    expect(emails(added.body)).toContain('kim@else.example');
    await site.mailbox.next('kim@else.example');
    const etag = present((await get('closed')).headers.get('etag'));
    const again = await post('add_conversation_member', { slug: 'closed', email: 'kim@else.example' });
    expect(again.status).toBe(200);
    expect((await get('closed', { 'if-none-match': etag })).status).toBe(304);
    await new Promise((r) => setTimeout(r, 300));
    expect(site.mailbox.mails.filter((m) => m.to.includes('kim@else.example'))).toEqual([]);
  });

  it('takes a member out: gone from users, the private conversation closes to them, their messages stay', async () => {
    const kim = await signedIn('kim@else.example');
    expect((await kim.reply('closed', { text: 'Kim was here' })).status).toBe(303);
    const removed = await post('remove_conversation_member', { slug: 'closed', email: 'kim@else.example' });
    expect(removed.status).toBe(200);
    expect(emails(removed.body)).not.toContain('kim@else.example');
    expect(removed.body.messages.map((m: { text: string }) => m.text)).toContain('Kim was here');
    expect((await kim.get('/c/closed')).status).toBe(404);
    // Taking out someone who is not a member changes nothing.
    const etag = present((await get('closed')).headers.get('etag'));
    expect((await post('remove_conversation_member', { slug: 'closed', email: 'kim@else.example' })).status).toBe(200);
    expect((await get('closed', { 'if-none-match': etag })).status).toBe(304);
  });

  it.each([
    [
      'an unknown slug (no fallback to the latest)',
      { slug: 'no-such', email: 'x@y.example', name: 'X' },
      404,
      'conversation_not_found',
    ],
    ['a new address without a name', { slug: 'open', email: 'nobody@new.example' }, 422, 'invalid_input'],
    ['no e-mail address', { slug: 'open', email: 'a@b' }, 422, 'invalid_input'],
    ['a name with control characters', { slug: 'open', email: 'c@new.example', name: 'C\u0000' }, 422, 'invalid_input'],
    ['no slug', { email: 'x@y.example' }, 422, 'invalid_input'],
  ])('refuses %s, and changes nothing', async (_what, body, status, code) => {
    const before = (await get('open')).body;
    const r = await post('add_conversation_member', body);
    expect(r.status).toBe(status);
    expect(r.body).toMatchObject({ code, error: expect.any(String) });
    expect((await get('open')).body).toEqual(before);
  });

  it('answers the same over tRPC', async () => {
    const r = await call(
      h,
      new Request(`${BASE}/trpc/conversations.addConversationMember`, {
        method: 'POST',
        headers: { ...auth(TOKEN), 'content-type': 'application/json' },
        body: JSON.stringify({ slug: 'latest', email: 'tess@new.example', name: 'Tess' }),
      }),
    );
    expect(r.status).toBe(200);
    expect(emails(r.body.result.data)).toContain('tess@new.example');
  });
});

describe('the team on the page', () => {
  const manageSection = (html: string) =>
    elements(html).find((e) => e.tagName === 'section' && e.attrs.some((a) => a.value === 'manage-members'));

  it('shows the team a way to add and remove members, and nobody else', async () => {
    const olivia = await signedIn('olivia@guild.example');
    const section = present(manageSection((await olivia.get('/c/open')).html));
    expect(textOf(section)).toContain('Tom Teammate <tom@guild.example>');
    const kim = await signedIn('kim@else.example');
    expect(manageSection((await kim.get('/c/open')).html)).toBeUndefined();
    expect((await new Visitor(h, HOST).get('/c/open')).html).not.toContain('@guild.example');
  });

  it('adds by e-mail and removes with one button; the person is told by mail', async () => {
    const tom = await signedIn('tom@guild.example');
    await tom.get('/c/open');
    const added = await tom.post('/c/open/members', {
      csrf: tom.hidden('csrf'),
      email: 'rae@new.example',
      name: 'Rae',
    });
    expect(added.status).toBe(303);
    expect(added.headers.get('location')).toBe('/c/open#manage-members');
    expect(emails((await get('open')).body)).toContain('rae@new.example');
    expect((await site.mailbox.next('rae@new.example')).text).toContain(`${HOST}/c/open`);
    await tom.get('/c/open');
    const removed = await tom.post('/c/open/members', { csrf: tom.hidden('csrf'), remove: 'rae@new.example' });
    expect(removed.status).toBe(303);
    expect(emails((await get('open')).body)).not.toContain('rae@new.example');
  });

  it('says why an address is refused, at the form, and changes nothing', async () => {
    const tom = await signedIn('tom@guild.example');
    await tom.get('/c/open');
    const before = (await get('open')).body;
    const refused = await tom.post('/c/open/members', { csrf: tom.hidden('csrf'), email: 'not an address' });
    expect(refused.status).toBe(422);
    const alert = present(
      elements(refused.html).find((e) => e.attrs.some((a) => a.name === 'role' && a.value === 'alert')),
    );
    expect(textOf(alert)).toBe('That is not an e-mail address.');
    expect((await get('open')).body).toEqual(before);
  });

  it('refuses a participant (403), a stranger to a private conversation (404) and a form without its token', async () => {
    const kim = await signedIn('kim@else.example');
    await kim.get('/c/open');
    const before = (await get('open')).body;
    expect(
      (await kim.post('/c/open/members', { csrf: kim.hidden('csrf'), email: 'z@new.example', name: 'Z' })).status,
    ).toBe(403);
    expect(
      (await kim.post('/c/closed/members', { csrf: kim.hidden('csrf'), email: 'z@new.example', name: 'Z' })).status,
    ).toBe(404);
    const olivia = await signedIn('olivia@guild.example');
    await olivia.get('/c/open');
    expect((await olivia.post('/c/open/members', { csrf: 'wrong', email: 'z@new.example', name: 'Z' })).status).toBe(
      403,
    );
    expect((await get('open')).body).toEqual(before);
  });
});
