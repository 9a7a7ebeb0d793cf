import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, call, type Harness } from './support/harness.ts';
import { mailTo, openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { elements, present, textOf, Visitor } from './support/site.ts';

/*
 * Who is who on an account: its team (owner, admin, member) and the participants. Who may see a
 * private conversation, who joins one by posting, and how a page tells the team's messages apart.
 */

const HOST = 'https://hearth.example.com';
const TOKEN = 'hearth-site-token-0123456789';

let site: PeopleSite;
let h: Harness;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'hearth',
        name: 'Hearth',
        host: HOST,
        owner: 'olivia@hearth.example',
        users: [
          { email: 'olivia@hearth.example', name: 'Olivia Owner' },
          { email: 'ada@hearth.example', name: 'Ada Admin', team: 'admin' },
          { email: 'tom@hearth.example', name: 'Tom Teammate', team: 'member' },
          { email: 'paul@else.example', name: 'Paul Participant' },
          { email: 'wren@else.example', name: 'Wren Writer' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          {
            title: 'Private',
            slug: 'private',
            anyone_can_post: false,
            members: ['olivia@hearth.example'],
            // Wren is not listed, but wrote in it: writing makes a member.
            messages: [
              { author: 'olivia@hearth.example', text: 'For the few' },
              { author: 'wren@else.example', text: 'I was here' },
            ],
          },
          {
            title: 'Public',
            slug: 'public',
            members: ['olivia@hearth.example'],
            messages: [
              { author: 'olivia@hearth.example', text: 'From the team' },
              { author: null, text: 'From nobody known' },
            ],
          },
        ],
      },
    ],
  });
  h = site.h;
});
afterAll(async () => site?.close());

const signedIn = (email: string) => signIn(site, HOST, email);

const get = (slug: string, headers: Record<string, string> = {}) =>
  call(
    h,
    new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, {
      headers: { ...auth(TOKEN), ...headers },
    }),
  );

const userNames = async (slug: string) =>
  ((await get(slug)).body as { users: { name: string }[] }).users.map((u) => u.name);

describe('a private conversation', () => {
  it.each([
    ['the owner', 'olivia@hearth.example', 200],
    ['an admin who is not a member', 'ada@hearth.example', 200],
    ['a team member who is not a member', 'tom@hearth.example', 404],
    ['a participant who is not a member', 'paul@else.example', 404],
    ['a participant who wrote in it', 'wren@else.example', 200],
  ])('is open to %s: %s gets %i', async (_who, email, status) => {
    const v = await signedIn(email);
    expect((await v.get('/c/private')).status).toBe(status);
  });

  it('is a 404 to a visitor who is not signed in', async () => {
    expect((await new Visitor(h, HOST).get('/c/private')).status).toBe(404);
  });
});

describe('posting joins', () => {
  it('a signed-in participant who replies becomes a member at once, and the change mark moves', async () => {
    expect(await userNames('public')).not.toContain('Paul Participant');
    const etag = present((await get('public')).headers.get('etag'), 'ETag');
    const v = await signedIn('paul@else.example');
    const posted = await v.reply('public', { text: 'Counting myself in' });
    expect(posted.status).toBe(303);
    expect(await userNames('public')).toContain('Paul Participant');
    expect((await get('public', { 'if-none-match': etag })).status).toBe(200);
    const page = await v.get('/c/public');
    const members = present(
      elements(page.html).find((e) => e.tagName === 'ul' && e.attrs.some((a) => a.value === 'members')),
    );
    expect(textOf(members)).toContain('Paul Participant');
  });

  it('an anonymous reply adds nobody', async () => {
    const before = await userNames('public');
    const posted = await new Visitor(h, HOST).reply('public', { text: 'Nobody in particular' });
    expect(posted.status).toBe(303);
    expect(await userNames('public')).toEqual(before);
  });
});

describe('the team badge', () => {
  const bylines = (html: string) =>
    elements(html)
      .filter((e) => e.tagName === 'span' && e.attrs.some((a) => a.name === 'class' && a.value === 'byline'))
      .map(textOf);

  it("marks the team's messages with the account's name, and nobody else's", async () => {
    const page = await new Visitor(h, HOST).get('/c/public');
    const lines = bylines(page.html);
    expect(lines[0]).toBe('Olivia Owner Hearth team');
    expect(lines[1]).toBe('Anonymous');
    expect(lines).toContain('Paul Participant');
    // The embed says the same.
    const embed = await new Visitor(h, HOST).get('/embeds/conversations/hearth/public');
    expect(bylines(embed.html)[0]).toBe('Olivia Owner Hearth team');
  });

  it('a participant named like the owner carries no badge', async () => {
    const v = await signIn(site, HOST, 'mimic@else.example', 'Olivia Owner');
    expect((await v.reply('public', { text: 'I am the owner, honest' })).status).toBe(303);
    const lines = bylines((await v.get('/c/public')).html);
    expect(lines.at(-1)).toBe('Olivia Owner');
  });
});

describe('the team page', () => {
  const roles = async () =>
    (
      (await call(h, new Request('http://api.test/api/v1/team/get_team', { headers: auth(TOKEN) }))).body as {
        team: { email: string; role: string }[];
      }
    ).team.map((m) => `${m.email} ${m.role}`);
  /** The page's team rows as they read: name, address, role. */
  const rows = (html: string) =>
    elements(html)
      .filter((e) => e.tagName === 'li' && e.attrs.some((a) => a.name === 'class' && a.value === 'team-member'))
      .map((e) => textOf(e).replace(/\s+/g, ' ').trim());
  const forms = (html: string) => elements(html).filter((e) => e.tagName === 'form').length;

  it('is a 404 to participants and visitors, and so is its form, which changes nothing', async () => {
    const before = await roles();
    for (const v of [await signedIn('paul@else.example'), new Visitor(h, HOST)]) {
      expect((await v.get('/manage/team')).status).toBe(404);
      const posted = await v.post('/manage/team', { csrf: 'x', email: 'paul@else.example', role: 'owner' });
      expect([403, 404]).toContain(posted.status);
    }
    expect(await roles()).toEqual(before);
  });

  it('shows a member the team, without a form, and refuses their post with the reason', async () => {
    const v = await signedIn('tom@hearth.example');
    const page = await v.get('/manage/team');
    expect(page.status).toBe(200);
    expect(rows(page.html).join('\n')).toMatch(/Olivia Owner olivia@hearth.example · Owner/);
    expect(page.html).not.toContain('Invite a teammate');
    const before = await roles();
    const refused = await v.post('/manage/team', {
      csrf: v.hidden('csrf'),
      email: 'tom@hearth.example',
      role: 'owner',
    });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('only the account’s owners and admins manage its team');
    expect(await roles()).toEqual(before);
  });

  it('lets an admin invite and manage members, but not make an owner, change one, or change themselves', async () => {
    const v = await signedIn('ada@hearth.example');
    const page = await v.get('/manage/team');
    expect(page.html).toContain('Invite a teammate');
    // No owner in the admin's choices; no form on the owner's row or on their own.
    expect(page.html).not.toContain('<option value="owner"');
    const before = await roles();
    for (const [email, role, says] of [
      ['tom@hearth.example', 'owner', 'only an owner makes someone an owner'],
      ['olivia@hearth.example', 'none', 'owns the account'],
      ['ada@hearth.example', 'member', 'nobody changes their own place'],
    ] as const) {
      const refused = await v.post('/manage/team', { csrf: v.hidden('csrf'), email, role });
      expect(refused.status, `${email} ${role}`).toBeGreaterThanOrEqual(403);
      expect(refused.html).toContain(says);
    }
    expect(await roles()).toEqual(before);

    const invited = await v.post('/manage/team', {
      csrf: v.hidden('csrf'),
      email: 'nia@new.example',
      name: 'Nia New',
      role: 'member',
    });
    expect(invited.status).toBe(303);
    const mail = await mailTo(site.mailbox, 'nia@new.example', /on the Hearth team as member/);
    expect(mail.text).toContain(`${HOST}/sign-in`);
    expect(mail.text).toContain('Ada Admin put you');
    // The invitee signs in with the address and finds the team's inbox and nav.
    const nia = await signedIn('nia@new.example');
    const home = await nia.get('/');
    expect(home.html).toContain('href="/manage/team"');
    const team = await v.get('/manage/team');
    expect(rows(team.html).join('\n')).toContain('Nia New nia@new.example · Member');
    expect(
      (await v.post('/manage/team', { csrf: v.hidden('csrf'), email: 'nia@new.example', role: 'none' })).status,
    ).toBe(303);
    expect(await roles()).not.toContain('nia@new.example member');
    // Off the team, her next page is a participant's: no team nav, no team page.
    expect((await nia.get('/manage/team')).status).toBe(404);
  });

  it('lets the owner make an admin an owner and back, with forms on every row but their own', async () => {
    const v = await signedIn('olivia@hearth.example');
    const page = await v.get('/manage/team');
    expect(page.html).toContain('<option value="owner"');
    expect(forms(page.html)).toBeGreaterThanOrEqual(4);
    const set = async (email: string, role: string) => {
      await v.get('/manage/team');
      return v.post('/manage/team', { csrf: v.hidden('csrf'), email, role });
    };
    expect((await set('ada@hearth.example', 'owner')).status).toBe(303);
    expect(await roles()).toContain('ada@hearth.example owner');
    expect((await set('ada@hearth.example', 'admin')).status).toBe(303);
    expect(await roles()).toContain('ada@hearth.example admin');
    const bad = await set('not-an-address', 'member');
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('role="alert"');
    const unknownRole = await set('ada@hearth.example', 'boss');
    expect(unknownRole.status).toBe(422);
    expect(await roles()).toContain('ada@hearth.example admin');
  });
});
