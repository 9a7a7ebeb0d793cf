import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, auth, type Harness, keptRecordings } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, type Element, elements, present, textOf, Visitor } from './support/site.ts';

/*
 * Message templates on the team's site (issue 41): the library at /manage/templates (owners and
 * admins; for everyone else it does not exist), and the reply form's "Use a template" picker,
 * which works without JavaScript (a GET form: the page comes back with the template's text in the
 * reply box and its recording named). Walked as the owner, an admin, a team member, a participant,
 * a visitor and another account's owner.
 */

const HOST = 'https://templates.example.com';
const OTHER_HOST = 'https://elsewhere.example.com';
const TOKEN = 'templates-site-token-0123456789';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;

let site: PeopleSite;
let h: Harness;
let admin: Visitor;
let member: Visitor;
let participant: Visitor;
let stranger: Visitor;

const sql = async <T>(text: string, params: unknown[] = []) =>
  (await h.db.orm.em.fork().getConnection().execute(text, params)) as T[];
const templateRows = () =>
  sql<{ name: string; text: string }>('select name, text, media_key from message_template order by id');
const messageCount = async () => (await sql<{ n: number }>('select count(*)::int as n from message'))[0]?.n ?? 0;

beforeAll(async () => {
  site = await openPeopleSite({
    accounts: [
      {
        key: 'templates',
        name: 'Templates Co',
        host: HOST,
        owner: 'olive@templates.example',
        users: [
          { email: 'olive@templates.example', name: 'Olive Owner' },
          { email: 'ada@templates.example', name: 'Ada Admin', team: 'admin' },
          { email: 'tim@templates.example', name: 'Tim Teammate', team: 'member' },
          { email: 'pia@else.example', name: 'Pia Participant' },
        ],
        tokens: [{ name: 'tests', token: TOKEN }],
        conversations: [
          {
            title: 'Refund please',
            slug: 'refund',
            members: ['olive@templates.example', 'pia@else.example'],
            messages: [{ author: 'pia@else.example', text: 'Where is my refund?' }],
          },
          { title: 'Recordings', slug: 'recordings', members: ['olive@templates.example'] },
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
  admin = await signIn(site, HOST, 'ada@templates.example');
  member = await signIn(site, HOST, 'tim@templates.example');
  participant = await signIn(site, HOST, 'pia@else.example');
  stranger = await signIn(site, OTHER_HOST, 'yara@elsewhere.example');
  // A recording of the team's, for a template to keep.
  const posted = await admin.replyWithRecording(
    'recordings',
    { text: 'Hello in my own voice' },
    { name: 'a.ogg', type: 'audio/ogg', bytes: new Uint8Array(readFileSync(`${FIXTURES}audio-3s.ogg`)) },
  );
  expect(posted.status).toBe(303);
});
afterAll(async () => site?.close());

/** The options of a page's select, by its id: [value, text]. */
const options = (html: string, id: string) => {
  const select = elements(html).find((e) => e.tagName === 'select' && attr(e, 'id') === id);
  return (select?.childNodes ?? [])
    .filter((n): n is Element => 'tagName' in n && n.tagName === 'option')
    .map((n) => [attr(n, 'value'), textOf(n)]);
};

describe('the library at /manage/templates', () => {
  it('is for owners and admins: anyone else gets the 404, and a post changes nothing', async () => {
    const owner = await signIn(site, HOST, 'olive@templates.example');
    expect((await owner.get('/manage/templates')).status).toBe(200);
    expect(owner.last?.html).toContain('href="/manage/templates"');
    expect((await admin.get('/manage/templates')).status).toBe(200);
    const anonymous = new Visitor(h, HOST);
    for (const who of [member, participant, anonymous]) {
      expect((await who.get('/manage/templates')).status).toBe(404);
    }
    expect((await stranger.get('/manage/templates')).status).toBe(200);
    // A form of the admin's page, sent by someone who may not keep the library.
    await admin.get('/manage/templates');
    const csrfOf = async (v: Visitor) => {
      await v.get('/c/refund');
      return v.hidden('csrf');
    };
    for (const who of [member, participant]) {
      const r = await who.post('/manage/templates', { csrf: await csrfOf(who), name: 'Sneaky', text: 'x' });
      expect(r.status).toBe(404);
    }
    expect(await templateRows()).toEqual([]);
  });

  it('adds a template with a recording, refuses a broken one with its reason, changes and deletes', async () => {
    const page = await admin.get('/manage/templates');
    expect(page.html).toContain('No templates yet.');
    const recordings = options(page.html, 'new-template-recording');
    const voice = recordings.find(([, text]) => /Audio 0:03 by Ada Admin/.test(text ?? ''));
    expect(voice).toBeDefined();
    const csrf = admin.hidden('csrf');
    const made = await admin.post('/manage/templates', {
      csrf,
      name: 'Refund sent',
      text: 'Your refund is on its way.\r\nIt takes 5 days.',
      recording: voice?.[0] ?? '',
    });
    expect(made.status).toBe(303);
    const id = Number(/#template-(\d+)$/.exec(made.headers.get('location') ?? '')?.[1]);
    const listed = await admin.get('/manage/templates');
    expect(listed.html).toContain('Refund sent');
    expect(listed.html).toContain('By Ada Admin · Audio, 0:03');
    expect(options(listed.html, `template-${id}-recording`)[0]).toEqual(['keep', 'Keep its recording (Audio, 0:03)']);

    // Refused: the page again at the form, with the reason and what was sent; nothing changes.
    const before = await templateRows();
    const taken = await admin.post('/manage/templates', { csrf, name: 'refund SENT', text: 'Again', recording: '' });
    expect(taken.status).toBe(422);
    expect(taken.html).toContain('name is already used by another message template of this account');
    expect(taken.html).toContain('value="refund SENT"');
    const empty = await admin.post(`/manage/templates/${id}`, { csrf, name: 'Refund sent', text: '', recording: '' });
    expect(empty.status).toBe(422);
    expect(empty.html).toContain('a template without a recording needs a text');
    const forged = await admin.post(`/manage/templates/${id}`, {
      csrf,
      name: 'Refund sent',
      text: 'x',
      recording: 'DROP TABLE',
    });
    expect(forged.status).toBe(422);
    expect((await admin.post('/manage/templates/99999999', { csrf, name: 'x', text: 'x' })).status).toBe(404);
    expect((await admin.post('/manage/templates/abc', { csrf, name: 'x', text: 'x' })).status).toBe(404);
    expect(await templateRows()).toEqual(before);

    // Changed, keeping its recording.
    const changed = await admin.post(`/manage/templates/${id}`, {
      csrf,
      name: 'Refund sent',
      text: 'Your refund is on its way.',
      recording: 'keep',
    });
    expect(changed.status).toBe(303);
    expect(await templateRows()).toEqual([
      { name: 'Refund sent', text: 'Your refund is on its way.', media_key: expect.any(String) },
    ]);

    // One more, then deleted.
    const extra = await admin.post('/manage/templates', { csrf, name: 'Short lived', text: 'Bye', recording: '' });
    const extraId = /#template-(\d+)$/.exec(extra.headers.get('location') ?? '')?.[1];
    expect((await admin.post(`/manage/templates/${extraId}/delete`, { csrf })).status).toBe(303);
    expect((await templateRows()).map((t) => t.name)).toEqual(['Refund sent']);
    // The other account's owner does not reach it.
    await stranger.get('/manage/templates');
    expect((await stranger.post(`/manage/templates/${id}/delete`, { csrf: stranger.hidden('csrf') })).status).toBe(404);
    expect((await templateRows()).map((t) => t.name)).toEqual(['Refund sent']);
  });

  it('takes a recording uploaded with the form, and refuses a file that is none, keeping nothing', async () => {
    const video = {
      name: 'tour.webm',
      type: 'video/webm',
      bytes: new Uint8Array(readFileSync(`${FIXTURES}video-3s.webm`)),
    };
    await admin.get('/manage/templates');
    const csrf = admin.hidden('csrf');
    const made = await admin.postMultipart('/manage/templates', { csrf, name: 'Video tour', text: '' }, video);
    expect(made.status).toBe(303);
    const listed = await admin.get('/manage/templates');
    expect(listed.html).toContain('Video tour</h2>\n<p class="meta">By Ada Admin · Video, 0:03</p>');
    const before = { rows: JSON.stringify(await templateRows()), kept: await keptRecordings(h) };
    const junk = { name: 'junk.webm', type: 'video/webm', bytes: new TextEncoder().encode('not a video') };
    const refused = await admin.postMultipart('/manage/templates', { csrf, name: 'Junk', text: '' }, junk);
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('recording: That file is not a recording');
    // A member off the library's keepers: the 404, before a byte is kept.
    await member.get('/c/refund');
    const sneaky = await member.postMultipart(
      '/manage/templates',
      { csrf: member.hidden('csrf'), name: 'Sneaky' },
      video,
    );
    expect(sneaky.status).toBe(404);
    expect(JSON.stringify(await templateRows())).toBe(before.rows);
    expect(await keptRecordings(h)).toBe(before.kept);
    const [tour] = await sql<{ id: number }>("select id from message_template where name = 'Video tour'");
    expect((await admin.post(`/manage/templates/${tour?.id}/delete`, { csrf })).status).toBe(303);
  });
});

describe('a workflow’s step', () => {
  it('posts a template chosen in the step editor', async () => {
    const [{ id } = { id: 0 }] = await sql<{ id: number }>('select id from message_template');
    const page = await admin.get('/manage/workflows');
    expect(options(page.html, 'new-workflow-step-0-template')).toEqual([
      ['', 'None'],
      [String(id), 'Refund sent'],
    ]);
    const made = await admin.post('/manage/workflows', {
      csrf: admin.hidden('csrf'),
      editor: 'fields',
      name: 'With a template',
      'step.0.trigger': 'conversation.created',
      'step.0.action': 'post_message',
      'step.0.as': 'ada@templates.example',
      'step.0.text': '',
      'step.0.recording': '',
      'step.0.template': String(id),
    });
    expect(made.status).toBe(303);
    const saved = (await apiCall(h, 'GET', '/workflows', auth(TOKEN))).body.workflows.find(
      (w: { name: string }) => w.name === 'With a template',
    );
    expect(saved.steps[0].action).toEqual({ type: 'post_message', as: 'ada@templates.example', template_id: id });
    const again = await admin.get('/manage/workflows');
    expect(again.html).toMatch(new RegExp(`<option value="${id}" selected>Refund sent</option>`));
  });
});

describe('the reply form’s template picker', () => {
  it('is offered to the whole team and to nobody else', async () => {
    for (const who of [admin, member]) {
      const page = await who.get('/c/refund');
      expect(options(page.html, 'reply-template').map(([, name]) => name)).toEqual(['Refund sent']);
    }
    for (const who of [participant, new Visitor(h, HOST)]) {
      const page = await who.get('/c/refund');
      expect(page.html).not.toContain('reply-template');
      const [[id] = []] = (await sql<{ id: number }>('select id from message_template')).map((r) => [r.id]);
      const asked = await who.get(`/c/refund?template=${id}`);
      expect(asked.status).toBe(200);
      expect(asked.html).not.toContain('Your refund is on its way');
    }
  });

  it('puts the template in the reply box, without JavaScript; the reply carries its recording and name', async () => {
    const [{ id } = { id: 0 }] = await sql<{ id: number }>('select id from message_template');
    const page = await member.get(`/c/refund?template=${id}`);
    expect(page.status).toBe(200);
    const box = elements(page.html).find((e) => e.tagName === 'textarea' && attr(e, 'name') === 'text');
    expect(textOf(present(box))).toBe('Your refund is on its way.');
    expect(page.html).toContain('From the template “Refund sent”, with its recording (Audio, 0:03)');
    const posted = await member.post('/c/refund', {
      csrf: member.hidden('csrf'),
      submit: member.hidden('submit'),
      template: member.hidden('template'),
      text: 'Your refund is on its way, Pia.',
    });
    expect(posted.status).toBe(303);
    const [latest] = (await apiCall(h, 'GET', '/messages/get_messages?conversation_slug=refund', auth(TOKEN))).body
      .messages;
    expect(latest).toMatchObject({
      text: 'Your refund is on its way, Pia.',
      message_type: 'audio',
      author: { name: 'Tim Teammate' },
      message_template: { id, name: 'Refund sent' },
    });
  });

  it('refuses a template from anyone off the team, or one that is gone, and posts nothing', async () => {
    const [{ id } = { id: 0 }] = await sql<{ id: number }>('select id from message_template');
    const before = await messageCount();
    const forged = await participant.reply('refund', { template: String(id), text: 'Mine' });
    expect(forged.status).toBe(422);
    expect(forged.html).toContain('That template is not in the team’s library');
    for (const wrong of ['99999999', 'abc', '']) {
      const r = await member.reply('refund', { template: wrong, text: 'Hi' });
      expect(r.status, wrong).toBe(422);
    }
    expect(await messageCount()).toBe(before);
  });
});
