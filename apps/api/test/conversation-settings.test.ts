import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, call, type Harness } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, elements, Visitor } from './support/site.ts';

/*
 * A conversation's settings on its page (issue 40): the team renames it; its owners and admins
 * also say who may see and post in it. Walked as a visitor, a participant, a team member, an
 * admin, the owner and another account's owner: each sees the form only when it may use it, a
 * post it may not make changes nothing, and whoever may not see the conversation gets its 404.
 */

const HOST = 'https://atrium.example.com';
const OTHER_HOST = 'https://yonder.example.com';
const TOKEN = 'atrium-site-token-0123456789';

let site: PeopleSite;
let h: Harness;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'atrium',
        name: 'Atrium',
        host: HOST,
        owner: 'olive@atrium.example',
        users: [
          { email: 'olive@atrium.example', name: 'Olive Owner' },
          { email: 'ada@atrium.example', name: 'Ada Admin', team: 'admin' },
          { email: 'tim@atrium.example', name: 'Tim Teammate', team: 'member' },
          { email: 'pia@else.example', name: 'Pia Participant' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          {
            title: 'November 26th, 2026 Conversation',
            slug: 'renamed',
            members: ['olive@atrium.example', 'pia@else.example'],
            messages: [{ author: 'pia@else.example', text: 'My invoice is wrong' }],
          },
          {
            title: 'Team only',
            slug: 'private',
            anyone_can_post: false,
            members: ['olive@atrium.example', 'pia@else.example'],
          },
        ],
      },
      {
        key: 'yonder',
        name: 'Yonder',
        host: OTHER_HOST,
        owner: 'yara@yonder.example',
        users: [{ email: 'yara@yonder.example', name: 'Yara Yonder' }],
      },
    ],
  });
  h = site.h;
});
afterAll(async () => site?.close());

const conversation = async (slug: string) =>
  (
    await call(
      h,
      new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, { headers: auth(TOKEN) }),
    )
  ).body as {
    title: string;
    anyone_can_post: boolean;
    allow_anonymous_messages: boolean;
    allow_search_engines: boolean;
  };

const hasSettings = (html: string) =>
  elements(html).some((e) => e.tagName === 'details' && attr(e, 'id') === 'conversation-settings');
/** The settings' boxes (the reply form's "Internal note" box is the reply's, not a setting). */
const boxes = (html: string) =>
  elements(html)
    .filter((e) => e.tagName === 'input' && attr(e, 'type') === 'checkbox' && attr(e, 'name') !== 'internal')
    .map((e) => attr(e, 'name'));

/** Opens the page and sends its settings form with `fields` (the CSRF token taken from the page). */
async function send(v: Visitor, slug: string, fields: Record<string, string>) {
  await v.get(`/c/${slug}`);
  return v.post(`/c/${slug}/settings`, { csrf: v.hidden('csrf'), ...fields });
}

describe('the settings form', () => {
  it('is for the team only: owners and admins get who may see and post, a team member the title alone', async () => {
    const owner = await signIn(site, HOST, 'olive@atrium.example');
    const admin = await signIn(site, HOST, 'ada@atrium.example');
    const teammate = await signIn(site, HOST, 'tim@atrium.example');
    const participant = await signIn(site, HOST, 'pia@else.example');
    for (const v of [owner, admin]) {
      const page = await v.get('/c/renamed');
      expect(hasSettings(page.html)).toBe(true);
      expect(boxes(page.html)).toEqual(['anyone_can_post', 'allow_anonymous_messages', 'allow_search_engines']);
    }
    const team = await teammate.get('/c/renamed');
    expect(hasSettings(team.html)).toBe(true);
    expect(boxes(team.html)).toEqual([]);
    for (const v of [participant, new Visitor(h, HOST)])
      expect(hasSettings((await v.get('/c/renamed')).html)).toBe(false);
  });

  it("puts the team's pages in the header of every page, for the team alone", async () => {
    const team = async (v: Visitor, path: string) => {
      const all = elements((await v.get(path)).html);
      return {
        nav: all.filter((e) => e.tagName === 'nav' && attr(e, 'aria-label') === "The team's pages").length,
        links: all.filter((e) => e.tagName === 'a').map((e) => attr(e, 'href')),
      };
    };
    const owner = await signIn(site, HOST, 'olive@atrium.example');
    const teammate = await signIn(site, HOST, 'tim@atrium.example');
    const participant = await signIn(site, HOST, 'pia@else.example');
    for (const path of ['/c/renamed', '/settings', '/c/no-such']) {
      const asOwner = await team(owner, path);
      expect(asOwner.nav, path).toBe(1);
      expect(asOwner.links, path).toEqual(expect.arrayContaining(['/manage/intake-pages', '/manage/workflows']));
      const asTeammate = await team(teammate, path);
      expect(asTeammate.nav, path).toBe(1);
      expect(asTeammate.links, path).not.toContain('/manage/intake-pages');
      expect((await team(participant, path)).nav, path).toBe(0);
    }
  });

  it('lists a signed-in participant’s own conversations at /, private ones included, and nobody else’s', async () => {
    const participant = await signIn(site, HOST, 'pia@else.example');
    const home = await participant.get('/');
    const listed = elements(home.html)
      .filter((e) => e.tagName === 'a' && (attr(e, 'href') ?? '').startsWith('/c/'))
      .map((e) => attr(e, 'href'));
    expect(listed.sort()).toEqual(['/c/private', '/c/renamed']);
    // The team has its inbox there instead; a visitor, the landing page alone.
    const owner = await signIn(site, HOST, 'olive@atrium.example');
    expect((await owner.get('/')).html).not.toContain('My conversations');
    expect((await new Visitor(h, HOST).get('/')).html).not.toContain('My conversations');
  });

  it('renames a conversation for a team member, without JavaScript: the page and the API say the new title', async () => {
    const teammate = await signIn(site, HOST, 'tim@atrium.example');
    const saved = await send(teammate, 'renamed', { title: 'Pia: my invoice is wrong' });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/c/renamed#conversation-settings');
    const page = await teammate.get('/c/renamed');
    expect(page.html).toContain('<title>Pia: my invoice is wrong');
    expect(await conversation('renamed')).toMatchObject({ title: 'Pia: my invoice is wrong', anyone_can_post: true });
  });

  it('refuses a team member who also sends who may see and post, changing nothing', async () => {
    const teammate = await signIn(site, HOST, 'tim@atrium.example');
    const before = await conversation('renamed');
    const refused = await send(teammate, 'renamed', { title: 'Taken private', visibility: '1' });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('owners and admins');
    expect(await conversation('renamed')).toEqual(before);
  });

  it('lets an admin make it private, and untick every box without JavaScript', async () => {
    const admin = await signIn(site, HOST, 'ada@atrium.example');
    const saved = await send(admin, 'renamed', { title: 'Pia: my invoice is wrong', visibility: '1' });
    expect(saved.status).toBe(303);
    expect(await conversation('renamed')).toMatchObject({
      anyone_can_post: false,
      allow_anonymous_messages: false,
      allow_search_engines: false,
    });
    // Private now: a visitor gets the 404; the admin ticks it public again.
    expect((await new Visitor(h, HOST).get('/c/renamed')).status).toBe(404);
    const back = await send(admin, 'renamed', {
      title: 'Pia: my invoice is wrong',
      visibility: '1',
      anyone_can_post: 'true',
      allow_anonymous_messages: 'true',
    });
    expect(back.status).toBe(303);
    expect(await conversation('renamed')).toMatchObject({ anyone_can_post: true, allow_anonymous_messages: true });
    expect((await new Visitor(h, HOST).get('/c/renamed')).status).toBe(200);
  });

  it('says why a title will not do, keeping what was typed, and changes nothing', async () => {
    const owner = await signIn(site, HOST, 'olive@atrium.example');
    const before = await conversation('renamed');
    const empty = await send(owner, 'renamed', { title: '' });
    expect(empty.status).toBe(422);
    expect(empty.html).toContain('title must not be empty');
    const long = await send(owner, 'renamed', { title: 'x'.repeat(300) });
    expect(long.status).toBe(422);
    expect(long.html).toContain('at most 255 characters');
    expect(long.html).toContain(`value="${'x'.repeat(300)}"`);
    expect(await conversation('renamed')).toEqual(before);
  });

  it('is refused to everyone else: a participant and a visitor 403, another account and the unseen 404', async () => {
    const before = await conversation('private');
    const participant = await signIn(site, HOST, 'pia@else.example');
    const asParticipant = await send(participant, 'private', { title: 'Mine now' });
    expect(asParticipant.status).toBe(403);
    // A visitor cannot see the private one: its 404, as a missing conversation's.
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/renamed');
    const csrf = visitor.hidden('csrf');
    const unseen = await visitor.post('/c/private/settings', { csrf, title: 'Mine now' });
    expect(unseen.status).toBe(404);
    const missing = await visitor.post('/c/no-such/settings', { csrf, title: 'Mine now' });
    expect(missing.status).toBe(404);
    // Another account's owner, on their own host, reaches nothing of this account.
    const stranger = await signIn(site, OTHER_HOST, 'yara@yonder.example');
    await stranger.get('/');
    const foreign = await stranger.post('/c/private/settings', { csrf: stranger.hidden('csrf'), title: 'Mine now' });
    expect(foreign.status).toBe(404);
    // Without the form's token, or from another site: refused before anything is read.
    const owner = await signIn(site, HOST, 'olive@atrium.example');
    await owner.get('/c/private');
    expect((await owner.post('/c/private/settings', { csrf: 'forged', title: 'Forged' })).status).toBe(403);
    expect(
      (
        await owner.post(
          '/c/private/settings',
          { csrf: owner.hidden('csrf'), title: 'Elsewhere' },
          { origin: OTHER_HOST },
        )
      ).status,
    ).toBe(403);
    expect(await conversation('private')).toEqual(before);
  });
});
