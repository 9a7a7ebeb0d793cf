import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiCall,
  auth,
  type Call,
  createJson,
  type Harness,
  makeAccount,
  openHarness,
  type TestAccount,
} from './support/harness.ts';

/*
 * The team's intake pages over the API (beside the spec's operations): made, changed, disabled,
 * listed; their keys, the one primary page, and what a disabled page means to create_conversation.
 */

let h: Harness;
let acme: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  h = await openHarness();
  acme = await makeAccount(h, 'acme');
  other = await makeAccount(h, 'other');
  await h.db.orm.em
    .fork()
    .getConnection()
    .execute(
      `insert into account_user (account_id, email, name, team_role) values (?, 'sam@acme.example', 'Sam', 'member'),
       (?, 'pat@acme.example', 'Pat', null)`,
      [acme.id, acme.id],
    );
});
afterAll(async () => h?.close());

const pages = (method: string, path: string, body?: unknown, token = acme.token): Promise<Call> =>
  apiCall(h, method, `/intake_pages${path}`, auth(token), body);

describe('intake pages over the API', () => {
  it('makes a page with a key from its name, and lists it', async () => {
    const made = await pages('POST', '', { name: 'Contact us, please!', team: ['Sam@acme.example'] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      key: 'contact-us-please',
      name: 'Contact us, please!',
      title: '',
      primary: false,
      workflow_id: null,
      allow_anonymous: false,
      team: ['sam@acme.example'],
      disabled: false,
    });
    const listed = await pages('GET', '');
    expect(listed.body.intake_pages.map((p: { key: string }) => p.key)).toContain('contact-us-please');
    // The other account sees none of it, and cannot change it.
    expect(JSON.stringify((await pages('GET', '', undefined, other.token)).body)).not.toContain('contact-us');
    expect((await pages('PATCH', `/${made.body.id}`, { title: 'x' }, other.token)).body).toEqual({
      error: 'no intake page with this id in this account',
      code: 'intake_page_not_found',
    });
  });

  it('moves a key made from the name aside for a page that has it, but never a key given', async () => {
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await pages('POST', '', { name: 'Twin' })).body.key);
    expect(keys).toEqual(['twin', 'twin-2', 'twin-3']);
    expect((await pages('POST', '', { name: 'Twin', key: 'twin' })).status).toBe(409);
  });

  it.each([
    [{ name: 'Bad key', key: 'Has Spaces' }, 422, 'invalid_input', /key: 1 to 60 lower-case/],
    [{ name: 'Again', key: 'contact-us-please' }, 409, 'intake_page_key_taken', /already used/],
    [{ name: 'Stranger', team: ['pat@acme.example'] }, 422, 'invalid_input', /not on the account's team: pat/],
    [{ name: 'Foreign flow', workflow_id: 999_999 }, 422, 'invalid_input', /no workflow 999999/],
    [{ name: 'Past the column', workflow_id: 2 ** 31 }, 422, 'invalid_input', /workflow_id/],
    [{ name: '' }, 422, 'invalid_input', /name/],
  ])('refuses %j, making nothing', async (body, status, code, message) => {
    const before = (await pages('GET', '')).body.intake_pages.length;
    const r = await pages('POST', '', body);
    expect([r.status, r.body.code]).toEqual([status, code]);
    expect(r.body.error).toMatch(message);
    expect((await pages('GET', '')).body.intake_pages).toHaveLength(before);
  });

  it("refuses another account's workflow", async () => {
    const r = await pages('POST', '', { name: 'Borrowed', workflow_id: other.workflowId });
    expect([r.status, r.body.error]).toEqual([422, `workflow_id: no workflow ${other.workflowId} in this account`]);
  });

  it('keeps one primary page: making another primary makes the last not', async () => {
    const made = await pages('POST', '', { name: 'New front door', primary: true, workflow_id: acme.workflowId });
    expect(made.body.primary).toBe(true);
    const all = (await pages('GET', '')).body.intake_pages as { id: number; primary: boolean }[];
    expect(all.filter((p) => p.primary).map((p) => p.id)).toEqual([made.body.id]);
    const created = await createJson(h, acme.token, { primary_intake_page: true });
    expect(created.status).toBe(201);
  });

  it('makes a disabled page unusable, as a missing one is, until it is enabled', async () => {
    const side = acme.secondaryPageId;
    expect((await pages('PATCH', `/${side}`, { disabled: true })).body.disabled).toBe(true);
    const refused = await createJson(h, acme.token, { intake_page_id: side });
    const missing = await createJson(h, acme.token, { intake_page_id: 999_999 });
    expect([refused.status, refused.body]).toEqual([missing.status, missing.body]);
    expect(refused.status).toBe(422);
    await pages('PATCH', `/${side}`, { disabled: false });
    expect((await createJson(h, acme.token, { intake_page_id: side })).status).toBe(201);
  });

  it('changes only what is given', async () => {
    const made = await pages('POST', '', { name: 'Feedback', title: 'Tell us', allow_anonymous: true });
    const changed = await pages('PATCH', `/${made.body.id}`, { welcome_text: 'We read everything.', key: 'say-it' });
    expect(changed.body).toMatchObject({
      name: 'Feedback',
      title: 'Tell us',
      allow_anonymous: true,
      welcome_text: 'We read everything.',
      key: 'say-it',
    });
    expect(Date.parse(changed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(made.body.updated_at));
  });
});
