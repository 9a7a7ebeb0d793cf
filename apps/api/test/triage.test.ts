import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, auth, type Harness } from './support/harness.ts';
import { mailTo, openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, elements, textOf, Visitor } from './support/site.ts';

/*
 * The team triages its conversations (issue 40): state, assignee, tags, the archive, and delete,
 * on the conversation's page (without JavaScript) and through update_conversation and
 * delete_conversation; the inbox shows each row's person, snippet, source and triage, and filters
 * by them. Walked as a visitor, a participant, a team member, an admin, the owner and another
 * account: each may do what the role table says, and a refused post changes nothing.
 */

const HOST = 'https://triage.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'triage-site-token-0123456789';
const OTHER_TOKEN = 'elsewhere-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;

let site: PeopleSite;
let h: Harness;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'triage',
        name: 'Triage Co',
        host: HOST,
        owner: 'olive@triage.example',
        users: [
          { email: 'olive@triage.example', name: 'Olive Owner' },
          { email: 'ada@triage.example', name: 'Ada Admin', team: 'admin' },
          { email: 'tim@triage.example', name: 'Tim Teammate', team: 'member' },
          { email: 'pia@else.example', name: 'Pia Participant' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        intake_pages: [{ key: 'contact', name: 'Contact us', title: 'Write to us', primary: true }],
        conversations: [
          {
            title: 'Pia: my invoice is wrong',
            slug: 'invoice',
            intake_page: 'Contact us',
            allow_anonymous_messages: true,
            members: ['olive@triage.example', 'pia@else.example'],
            messages: [
              { author: 'pia@else.example', text: 'My invoice is wrong: it says 40 hours.' },
              { author: 'olive@triage.example', text: 'Looking into the invoice now.' },
            ],
          },
          {
            title: 'Quiet one',
            slug: 'quiet',
            members: ['olive@triage.example'],
            messages: [{ author: null, text: 'Hello from nowhere' }],
          },
          {
            title: 'Team only',
            slug: 'private',
            anyone_can_post: false,
            members: ['olive@triage.example'],
          },
          { title: 'Doomed', slug: 'doomed', members: ['olive@triage.example'] },
        ],
      },
      {
        key: 'elsewhere',
        name: 'Elsewhere',
        host: OTHER_HOST,
        owner: 'yara@elsewhere.example',
        users: [{ email: 'yara@elsewhere.example', name: 'Yara Elsewhere' }],
        tokens: [{ name: 'tests', token: OTHER_TOKEN }],
      },
    ],
  });
  h = site.h;
});
afterAll(async () => site?.close());

const idOf = async (slug: string): Promise<number> =>
  (await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN))).body.id;

/**
 * The triage as update_conversation answers it, asked to set the tags the conversation has: a
 * change of nothing (the only way the API reads a triage; the spec's reads keep their shape).
 */
const triageOf = async (slug: string) => {
  const found = await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN));
  const r = await apiCall(h, 'POST', '/conversations/update_conversation', auth(TOKEN), {
    conversation_id: found.body.id,
    tags: found.body.tags.map((t: { name: string }) => t.name),
  });
  expect(r.status).toBe(200);
  return r.body as {
    state: string;
    source: string;
    assignee: { email: string } | null;
    archived: boolean;
    tags: { name: string }[];
  };
};

/** Opens the page and sends its triage form with `fields` (the CSRF token taken from the page). */
async function triage(v: Visitor, slug: string, fields: Record<string, string>) {
  await v.get(`/c/${slug}`);
  const csrf = v.hidden('csrf');
  return v.post(`/c/${slug}/triage`, { csrf, ...fields });
}

/** The inbox's rows as a reader sees them: title, and the text of the row. */
async function rows(v: Visitor, query = '') {
  const page = await v.get(`/${query}`);
  expect(page.status).toBe(200);
  return elements(page.html)
    .filter((e) => e.tagName === 'li' && /\b(un)?read\b/.test(attr(e, 'class') ?? ''))
    .map((li) => textOf(li).replace(/\s+/g, ' ').trim());
}

describe('the inbox', () => {
  it('shows who each conversation is with, the latest words, where it began and its triage', async () => {
    const owner = await signIn(site, HOST, 'olive@triage.example');
    const all = await rows(owner);
    const invoice = all.find((r) => r.startsWith('Pia: my invoice is wrong'));
    expect(invoice).toContain('Pia Participant via Contact us');
    expect(invoice).toContain('Olive Owner: Looking into the invoice now.');
    expect(invoice).toContain('Open · Unassigned');
    const quiet = all.find((r) => r.startsWith('Quiet one'));
    expect(quiet).toContain('A visitor via the API');
    const empty = all.find((r) => r.startsWith('Doomed'));
    expect(empty).toContain('Via the API; nobody outside the team has written yet.');
    expect(empty).toContain('No messages yet.');
  });

  it('searches the words of titles and of what was said, each as a word’s start', async () => {
    const owner = await signIn(site, HOST, 'olive@triage.example');
    // Each word as the start of a word, in any case: "HOUR" finds "40 hours" in a message.
    const found = await rows(owner, '?q=40%20HOUR');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^Pia: my invoice is wrong/);
    // A title's words too; query syntax typed is only words.
    expect((await rows(owner, '?q=quie')).map((r) => r.split(' ')[0])).toEqual(['Quiet']);
    expect(await rows(owner, `?q=${encodeURIComponent("quiet & !one | ' :*")}`)).toHaveLength(1);
    expect(await rows(owner, '?q=nowhere%20invoice')).toHaveLength(0);
  });
});

describe('triage on the page', () => {
  it('lets a team member set the state, assign, tag and archive, without JavaScript', async () => {
    const teammate = await signIn(site, HOST, 'tim@triage.example');
    const saved = await triage(teammate, 'invoice', {
      state: 'waiting',
      assignee: 'ada@triage.example',
      tags: 'billing, Urgent, billing',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/c/invoice#triage');
    expect(await triageOf('invoice')).toMatchObject({
      state: 'waiting',
      source: 'intake',
      assignee: { email: 'ada@triage.example' },
      archived: false,
      tags: [{ name: 'billing' }, { name: 'Urgent' }],
    });
    const page = await teammate.get('/c/invoice');
    const selected = elements(page.html)
      .filter((e) => e.tagName === 'option' && e.attrs.some((a) => a.name === 'selected'))
      .map((e) => attr(e, 'value'));
    expect(selected).toEqual(expect.arrayContaining(['waiting', 'ada@triage.example']));

    // The filters find it by state, by assignee (Ada's "me"), by source and by tag.
    const admin = await signIn(site, HOST, 'ada@triage.example');
    const titles = async (q: string) => (await rows(admin, q)).map((r) => r.split(' ')[0]);
    expect(await titles('?state=waiting')).toEqual(['Pia:']);
    expect(await titles('?assignee=me')).toEqual(['Pia:']);
    expect(await titles('?assignee=nobody')).not.toContain('Pia:');
    expect(await titles('?source=intake')).toEqual(['Pia:']);
    expect(await titles('?tag=urgent')).toEqual(['Pia:']);
    // A filter it does not know is no filter.
    expect((await titles('?state=sideways')).length).toBeGreaterThan(1);

    // Archived: out of the inbox, in the archive.
    expect((await triage(teammate, 'invoice', { archived: 'true' })).status).toBe(303);
    expect(await titles('')).not.toContain('Pia:');
    expect(await titles('?archived=1')).toEqual(['Pia:']);
  });

  it('opens a conversation again, and brings it back from the archive, when the other side writes', async () => {
    const owner = await signIn(site, HOST, 'olive@triage.example');
    expect((await triage(owner, 'quiet', { state: 'closed', archived: 'true' })).status).toBe(303);
    expect((await triage(owner, 'quiet', { archived: 'true' })).status).toBe(303);
    expect(await triageOf('quiet')).toMatchObject({ state: 'closed', archived: true });

    // The team's own reply leaves a closed one closed, and archived.
    await owner.get('/c/quiet');
    const team = await owner.post('/c/quiet', {
      csrf: owner.hidden('csrf'),
      submit: owner.hidden('submit'),
      text: 'Closing this.',
    });
    expect(team.status).toBe(303);
    expect(await triageOf('quiet')).toMatchObject({ state: 'closed', archived: true });

    // A visitor writes: open, and in the inbox again.
    const visitor = new Visitor(h, HOST);
    await visitor.get('/c/quiet');
    const posted = await visitor.post('/c/quiet', {
      csrf: visitor.hidden('csrf'),
      submit: visitor.hidden('submit'),
      text: 'Not closed for me!',
    });
    expect(posted.status).toBe(303);
    expect(await triageOf('quiet')).toMatchObject({ state: 'open', archived: false });

    // Then the team answers: waiting on them.
    await owner.get('/c/quiet');
    await owner.post('/c/quiet', { csrf: owner.hidden('csrf'), submit: owner.hidden('submit'), text: 'Reopened.' });
    expect(await triageOf('quiet')).toMatchObject({ state: 'waiting' });
  });

  it('says why a triage will not do, keeping the tags typed, and changes nothing', async () => {
    const owner = await signIn(site, HOST, 'olive@triage.example');
    const before = await triageOf('invoice');
    const notTeam = await triage(owner, 'invoice', { assignee: 'pia@else.example' });
    expect(notTeam.status).toBe(422);
    expect(notTeam.html).toContain('is not on the account');
    const long = await triage(owner, 'invoice', { tags: `ok, ${'x'.repeat(120)}` });
    expect(long.status).toBe(422);
    expect(long.html).toContain('at most 100 characters');
    expect(long.html).toContain(`value="ok, ${'x'.repeat(120)}"`);
    expect((await triage(owner, 'invoice', { state: 'sideways' })).status).toBe(400);
    expect((await triage(owner, 'invoice', { archived: 'maybe' })).status).toBe(400);
    expect(await triageOf('invoice')).toEqual(before);
  });

  it('is refused to a participant and a visitor (403), and a private one is not there for them (404)', async () => {
    const before = await triageOf('invoice');
    const participant = await signIn(site, HOST, 'pia@else.example');
    expect((await triage(participant, 'invoice', { state: 'closed' })).status).toBe(403);
    const visitor = new Visitor(h, HOST);
    expect((await triage(visitor, 'invoice', { state: 'closed' })).status).toBe(403);
    // Another account's person, signed in here, is a participant: the private one is a 404.
    const stranger = await signIn(site, HOST, 'yara@elsewhere.example', 'Yara');
    await stranger.get('/c/invoice');
    const csrf = stranger.hidden('csrf');
    expect((await stranger.post('/c/private/triage', { csrf, state: 'closed' })).status).toBe(404);
    expect((await stranger.post('/c/private/delete', { csrf })).status).toBe(404);
    expect(await triageOf('invoice')).toEqual(before);
    // Nobody but the team sees the panel.
    for (const v of [participant, visitor]) {
      expect(elements((await v.get('/c/invoice')).html).some((e) => attr(e, 'id') === 'triage')).toBe(false);
    }
  });
});

describe('the team starts a conversation', () => {
  const count = async () =>
    Number(
      (
        (await h.db.orm.em.fork().getConnection().execute('select count(*)::int as n from conversation')) as {
          n: number;
        }[]
      )[0]?.n,
    );

  async function start(v: Visitor, fields: Record<string, string>) {
    expect((await v.get('/new')).status).toBe(200);
    return v.post('/new', { csrf: v.hidden('csrf'), submit: v.hidden('submit'), ...fields });
  }

  it('from the inbox, sends it to someone new, who is mailed its link and the first message', async () => {
    const tim = await signIn(site, HOST, 'tim@triage.example');
    expect((await tim.get('/')).html).toContain('href="/new"');
    const started = await start(tim, {
      title: 'Your onboarding',
      text: 'Hi Nell,\nhere is how we start.',
      to: 'nell@new.example',
      to_name: 'Nell New',
      visibility: 'private',
    });
    expect(started.status).toBe(303);
    const slug = (started.headers.get('location') ?? '').replace('/c/', '');
    const found = await apiCall(h, 'GET', `/conversations/get_conversation?slug=${slug}`, auth(TOKEN));
    expect(found.body.title).toBe('Your onboarding');
    expect(found.body.anyone_can_post).toBe(false);
    expect(found.body.users.map((u: { name: string }) => u.name).sort()).toEqual(['Nell New', 'Tim Teammate']);
    expect(found.body.messages.map((m: { text: string }) => m.text)).toEqual(['Hi Nell,\nhere is how we start.']);
    const triaged = await triageOf(slug);
    expect(triaged).toMatchObject({ source: 'team', state: 'waiting' });
    const mail = await mailTo(site.mailbox, 'nell@new.example', /started a conversation with you/);
    expect(mail.text).toContain('Tim Teammate (Triage Co) started a conversation with you');
    expect(mail.text).toContain('Your onboarding');
    expect(mail.text).toContain('> here is how we start.');
    expect(mail.text).toContain(`${HOST}/c/${slug}`);
    // The inbox says where it began.
    const row = (await rows(tim)).find((r) => r.startsWith('Your onboarding'));
    expect(row).toContain('With Nell New via the team; they have not written yet.');
  });

  it('takes a second send of the same form as the first: one conversation', async () => {
    const olive = await signIn(site, HOST, 'olive@triage.example');
    expect((await olive.get('/new')).status).toBe(200);
    const fields = {
      csrf: olive.hidden('csrf'),
      submit: olive.hidden('submit'),
      title: 'Once only',
      visibility: 'public',
    };
    const before = await count();
    const first = await olive.post('/new', fields);
    const second = await olive.post('/new', fields);
    expect(first.status).toBe(303);
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(await count()).toBe(before + 1);
  });

  it('says why a start will not do, keeping what was typed, and writes nothing', async () => {
    const olive = await signIn(site, HOST, 'olive@triage.example');
    const before = await count();
    for (const [fields, says] of [
      [{ title: '   ', text: 'No title' }, 'Give the conversation a title.'],
      [{ title: 'To nobody', to: 'not an address' }, 'e-mail'],
      [{ title: 'x'.repeat(256) }, '255'],
      [{ title: 'Long name', to: 'q@new.example', to_name: 'Q'.repeat(256) }, 'name'],
    ] as const) {
      const refused = await start(olive, fields);
      expect(refused.status, JSON.stringify(fields)).toBe(422);
      expect(refused.html).toContain('role="alert"');
      expect(refused.html.toLowerCase()).toContain(says.toLowerCase());
    }
    expect(await count()).toBe(before);
  });

  it('is not there for a participant or a visitor, and their post writes nothing', async () => {
    const before = await count();
    for (const v of [await signIn(site, HOST, 'pia@else.example'), new Visitor(h, HOST)]) {
      expect((await v.get('/new')).status).toBe(404);
      const posted = await v.post('/new', { csrf: 'x', title: 'Sneaky' });
      expect([403, 404]).toContain(posted.status);
    }
    expect(await count()).toBe(before);
  });
});

describe('hostile triage forms', () => {
  it('never answer a 5xx, and one refused changes nothing', async () => {
    const owner = await signIn(site, HOST, 'olive@triage.example');
    await owner.get('/c/quiet');
    const csrf = owner.hidden('csrf');
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('', 'open', 'closed', 'true', 'false', 'ada@triage.example', ',,,', '\u0000', 'x'.repeat(3000)),
    );
    const name = fc.constantFrom('state', 'assignee', 'tags', 'archived', 'csrf', 'title');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 5 }), async (pairs) => {
        const before = await triageOf('quiet');
        const body = `csrf=${csrf}&${new URLSearchParams(pairs).toString()}`;
        const res = await owner.post('/c/quiet/triage', {}, { body });
        expect([303, 400, 403, 413, 422], body.slice(0, 120)).toContain(res.status);
        if (res.status !== 303) expect(await triageOf('quiet')).toEqual(before);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('hostile forms of the team’s new pages', () => {
  it('New conversation, the team page and the step editor never answer a 5xx, and a refusal changes nothing', async () => {
    const owner = await signIn(site, HOST, 'olive@triage.example');
    await owner.get('/new');
    const csrf = owner.hidden('csrf');
    const db = h.db.orm.em.fork().getConnection();
    const state = async () =>
      JSON.stringify(
        await db.execute(
          `select (select count(*) from conversation) as c, (select count(*) from account_user) as u,
                  (select string_agg(email || ':' || coalesce(team_role, '-'), ',' order by id) from account_user) as roles,
                  (select string_agg(steps::text, ',' order by id) from workflow) as steps`,
        ),
      );
    const value = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        '',
        'owner',
        'admin',
        'none',
        'public',
        'private',
        'message.created',
        'repeat',
        'add_tags',
        'post_message',
      ),
      fc.constantFrom(
        'olive@triage.example',
        'tim@triage.example',
        'x@y.example',
        '\u0000',
        'x'.repeat(3000),
        '-1',
        '1e9',
      ),
    );
    const fields = {
      '/new': fc.constantFrom('title', 'text', 'to', 'to_name', 'visibility', 'submit'),
      '/manage/team': fc.constantFrom('email', 'name', 'role'),
      '/manage/workflows': fc.constantFrom(
        'name',
        'editor',
        'steps',
        'step.0.trigger',
        'step.0.by',
        'step.0.wait',
        'step.0.wait_unit',
        'step.0.times',
        'step.0.action',
        'step.0.as',
        'step.0.tags',
        'step.0.emails',
        'step.0.recording',
        'step.25.trigger',
      ),
    };
    const statuses: number[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...(Object.keys(fields) as (keyof typeof fields)[]))
          .chain((path) => fc.tuple(fc.constant(path), fc.array(fc.tuple(fields[path], value), { maxLength: 6 }))),
        async ([path, pairs]) => {
          const before = await state();
          const body = `csrf=${csrf}&${new URLSearchParams(pairs).toString()}`;
          const res = await owner.post(path, {}, { body });
          statuses.push(res.status);
          expect([303, 400, 403, 404, 413, 422], `${path} ${body.slice(0, 120)}`).toContain(res.status);
          if (res.status !== 303) expect(await state()).toBe(before);
        },
      ),
      // One form that goes through and one refused are always among the runs, so the last checks do not
      // hang on chance.
      {
        numRuns: 60,
        examples: [
          [
            [
              '/new',
              [
                ['title', 'A fuzzed start'],
                ['visibility', 'public'],
              ],
            ],
          ],
          [['/new', [['title', '   ']]]],
        ],
      },
    );
    // The forms were read, not refused at the door: some went through, some were refused as they said.
    expect(statuses).toContain(422);
    expect(statuses.some((s) => s === 303)).toBe(true);
  }, 120_000);
});

describe('deleting a conversation', () => {
  it('is for owners and admins: a team member is refused, changing nothing', async () => {
    // The fuzzing above may have given Tim another role through the team page (a form it is
    // allowed to send): he is a member again for this test.
    await h.db.orm.em
      .fork()
      .getConnection()
      .execute("update account_user set team_role = 'member' where email = 'tim@triage.example'");
    const teammate = await signIn(site, HOST, 'tim@triage.example');
    const panel = (await teammate.get('/c/doomed')).html;
    expect(panel).not.toContain('/c/doomed/delete');
    expect((await teammate.get('/c/doomed/delete')).status).toBe(403);
    await teammate.get('/c/doomed');
    expect((await teammate.post('/c/doomed/delete', { csrf: teammate.hidden('csrf') })).status).toBe(403);
    expect((await new Visitor(h, HOST).get('/c/doomed')).status).toBe(200);
  });

  it('asks first, then deletes it with its recordings: its page, the API and the media answer 404', async () => {
    const admin = await signIn(site, HOST, 'ada@triage.example');
    // A recording in it, kept by this server.
    await admin.get('/c/doomed');
    const posted = await admin.postMultipart(
      '/c/doomed',
      { csrf: admin.hidden('csrf'), submit: admin.hidden('submit'), text: 'With sound' },
      { name: 'a.ogg', type: 'audio/ogg', bytes: new Uint8Array(readFileSync(`${FIXTURES}audio-3s.ogg`)) },
    );
    expect(posted.status).toBe(303);
    const [kept] = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute(`select m.media_key from message m join conversation c on c.id = m.conversation_id
        where c.slug = 'doomed' and m.media_key is not null`)) as { media_key: string }[];
    expect(await h.services.media.store.size(kept?.media_key ?? '')).toBeGreaterThan(0);

    const panel = (await admin.get('/c/doomed')).html;
    expect(panel).toContain('href="/c/doomed/delete"');
    const ask = await admin.get('/c/doomed/delete');
    expect(ask.status).toBe(200);
    expect(ask.html).toContain('Delete “Doomed”?');
    expect(ask.html).toContain('Its one message goes with it');
    const done = await admin.post('/c/doomed/delete', { csrf: admin.hidden('csrf') });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Conversation deleted');

    expect((await admin.get('/c/doomed')).status).toBe(404);
    expect(
      (await apiCall(h, 'GET', '/conversations/get_conversation?slug=doomed', auth(TOKEN))).headers.get(
        'conversation-matched',
      ),
    ).toBe('none');
    expect(await h.services.media.store.size(kept?.media_key ?? '')).toBeNull();
    // Posted again, the form finds nothing.
    expect((await admin.post('/c/doomed/delete', { csrf: admin.hidden('csrf') })).status).toBe(404);
  });
});

describe('the API', () => {
  it('triages through update_conversation, answering the triage beside the conversation', async () => {
    const id = await idOf('private');
    const r = await apiCall(h, 'POST', '/conversations/update_conversation', auth(TOKEN), {
      conversation_id: id,
      state: 'closed',
      assignee_email: 'TIM@triage.example',
      tags: ['vip'],
      archived: true,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id,
      slug: 'private',
      tags: [{ name: 'vip' }],
      state: 'closed',
      source: 'api',
      assignee: { email: 'tim@triage.example', name: 'Tim Teammate' },
      archived: true,
    });
    const unassigned = await apiCall(h, 'POST', '/conversations/update_conversation', auth(TOKEN), {
      conversation_id: id,
      assignee_email: null,
      tags: [],
    });
    expect(unassigned.body).toMatchObject({ assignee: null, tags: [], state: 'closed' });
    // The spec's answer keeps its shape: no triage in get_conversation.
    const spec = await apiCall(h, 'GET', '/conversations/get_conversation?slug=private', auth(TOKEN));
    expect(spec.body).not.toHaveProperty('state');
  });

  it('refuses what will not do, and never reaches another account’s conversation', async () => {
    const id = await idOf('private');
    for (const body of [
      { conversation_id: id, state: 'sideways' },
      { conversation_id: id, assignee_email: 'pia@else.example' },
      { conversation_id: id, assignee_email: 'yara@elsewhere.example' },
      { conversation_id: id, tags: ['x'.repeat(101)] },
      { conversation_id: id, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      { conversation_id: id, archived: 'yes' },
    ]) {
      const refused = await apiCall(h, 'POST', '/conversations/update_conversation', auth(TOKEN), body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body).toMatchObject({ code: 'invalid_input' });
    }
    const foreign = await apiCall(h, 'POST', '/conversations/delete_conversation', auth(OTHER_TOKEN), {
      conversation_id: id,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ code: 'conversation_not_found' });
    expect(await idOf('private')).toBe(id);
  });

  it('deletes through delete_conversation, once', async () => {
    const made = await apiCall(h, 'POST', '/conversations/create_conversation', auth(TOKEN), { slug: 'short-lived' });
    expect(made.status).toBe(201);
    const gone = await apiCall(h, 'POST', '/conversations/delete_conversation', auth(TOKEN), {
      conversation_id: made.body.id,
    });
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ id: made.body.id, deleted: true });
    const again = await apiCall(h, 'POST', '/conversations/delete_conversation', auth(TOKEN), {
      conversation_id: made.body.id,
    });
    expect(again.status).toBe(404);
    expect((await new Visitor(h, HOST).get('/c/short-lived')).status).toBe(404);
  });
});
