import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, BASE, call, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';

/*
 * get_team and update_team_member (ours): the account's team over the API, by the rules the
 * team's page follows (team.test.ts walks the page as each role). Someone who joins the team is
 * mailed where to sign in; the account's owner stays an owner; a refusal changes nothing.
 */

let h: Harness;
let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'bravo');
});
afterAll(async () => h?.close());

const auth = (t: TestAccount) => ({ authorization: `Bearer ${t.token}` });
const team = async (t: TestAccount) => {
  const r = await apiCall(h, 'GET', '/team/get_team', auth(t));
  expect(r.status).toBe(200);
  return (r.body.team as { email: string; role: string }[]).map((m) => `${m.email} ${m.role}`);
};
const change = (t: TestAccount, body: unknown) => apiCall(h, 'POST', '/team/update_team_member', auth(t), body);
const mails = async (to: string) =>
  (await h.db.orm.em
    .fork()
    .getConnection()
    .execute('select subject, body from outgoing_mail where recipient = ? order by id', [to])) as {
    subject: string;
    body: string;
  }[];

describe('the team over the API', () => {
  it('lists the owner, invites someone new by address (a mail says where to sign in), changes roles, and takes them off', async () => {
    expect(await team(a)).toEqual(['owner@alpha.example.com owner']);

    const invited = await change(a, { email: 'Sam@Alpha.example', name: 'Sam Support', role: 'member' });
    expect(invited.status).toBe(200);
    expect(invited.body).toEqual({
      id: expect.any(Number),
      name: 'Sam Support',
      email: 'Sam@Alpha.example',
      role: 'member',
      account_owner: false,
      changed: true,
      mailed: true,
    });
    const [mail] = await mails('Sam@Alpha.example');
    expect(mail?.subject).toMatch(/^You are on the .+ team$/);
    expect(mail?.body).toContain('https://alpha.example.com/sign-in');
    expect(mail?.body).toContain('as member');

    // The same address in another case is the same person: their role changes, no second mail.
    const promoted = await change(a, { email: 'sam@alpha.example', role: 'admin' });
    expect(promoted.body).toMatchObject({ role: 'admin', changed: true, mailed: false });
    expect(await team(a)).toEqual(['owner@alpha.example.com owner', 'Sam@Alpha.example admin']);
    const again = await change(a, { email: 'sam@alpha.example', role: 'admin' });
    expect(again.body).toMatchObject({ changed: false, mailed: false });

    const off = await change(a, { email: 'sam@alpha.example', role: 'none' });
    expect(off.body).toMatchObject({ role: null, changed: true });
    expect(await team(a)).toEqual(['owner@alpha.example.com owner']);
    expect(await mails('Sam@Alpha.example')).toHaveLength(1);
  });

  it('takes a form body and answers over tRPC alike', async () => {
    const form = await call(
      h,
      new Request(`${BASE}/api/v1/team/update_team_member`, {
        method: 'POST',
        headers: { ...auth(a), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=form%40alpha.example&role=member',
      }),
    );
    expect(form.status).toBe(200);
    expect(form.body).toMatchObject({ name: 'form', role: 'member', mailed: true });
    const trpc = await call(h, new Request(`${BASE}/trpc/team.getTeam`, { headers: auth(a) }));
    expect(trpc.body.result.data.team.map((m: { email: string }) => m.email)).toContain('form@alpha.example');
  });

  it('refuses what the rules do not allow, says why, and changes nothing', async () => {
    const before = await team(a);
    const refusals: [unknown, number, RegExp][] = [
      [{ email: 'owner@alpha.example.com', role: 'admin' }, 422, /owns the account/],
      [{ email: 'nobody@alpha.example', role: 'none' }, 422, /nobody with that e-mail address/],
      [{ email: 'not an address', role: 'member' }, 422, /./],
      [{ email: 'x@alpha.example', role: 'boss' }, 422, /role/],
      [{ email: 'x@alpha.example', name: 'n'.repeat(256), role: 'member' }, 422, /name/i],
      [{ email: 'x@alpha.example', name: 'Bad\uD800', role: 'member' }, 422, /name/i],
      [{ role: 'member' }, 422, /email/],
    ];
    for (const [body, status, says] of refusals) {
      const r = await change(a, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.code).toBe('invalid_input');
      expect(r.body.error).toMatch(says);
    }
    expect(await team(a)).toEqual(before);
    expect(await mails('x@alpha.example')).toEqual([]);
  });

  it('never reaches another account’s people: an address of alpha’s is a new person to bravo', async () => {
    const r = await change(b, { email: 'owner@alpha.example.com', role: 'none' });
    expect(r.status).toBe(422);
    expect(await team(a)).toContain('owner@alpha.example.com owner');
    expect(await team(b)).toEqual(['owner@bravo.example.com owner']);
  });

  it('asks for a token', async () => {
    expect((await apiCall(h, 'GET', '/team/get_team', {})).status).toBe(401);
    expect(
      (await apiCall(h, 'POST', '/team/update_team_member', {}, { email: 'a@b.example', role: 'member' })).status,
    ).toBe(401);
  });
});
