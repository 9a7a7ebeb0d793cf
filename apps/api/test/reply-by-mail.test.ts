import type { TSeed } from '@convo/db';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { type Harness, rows } from './support/harness.ts';
import { type Mail, type Mailbox, mailHeader } from './support/mailbox.ts';
import { mailTo, openPeopleSite, type PeopleSite } from './support/people.ts';
import { Visitor } from './support/site.ts';

/*
 * Reply by e-mail (issue 44), first part: a notification names a reply address of its own, and a
 * mail sent back to it, as raw MIME through the relay's endpoint (POST /inbound/mail), is posted as
 * the person it was sent to, without the quote; anyone else's, a second copy, an auto-reply or an
 * unknown address posts nothing.
 */

const HOST = 'https://answer.example.com';
const DOMAIN = 'reply.answer.example.com';
const SECRET = 'relay-secret-0123456789';

const SEED: TSeed = {
  accounts: [
    {
      key: 'answer',
      name: 'Answer',
      host: HOST,
      owner: 'olivia@answer.example',
      users: [
        { email: 'olivia@answer.example', name: 'Olivia Owner' },
        { email: 'pat@client.example', name: 'Pat Client' },
      ],
      conversations: [{ title: 'Kitchen', slug: 'kitchen', members: ['olivia@answer.example', 'pat@client.example'] }],
    },
  ],
};

let site: PeopleSite;
let h: Harness;
let mailbox: Mailbox;
let notify: QueueWorker;

beforeAll(async () => {
  site = await openPeopleSite(SEED, { app: { inbound: { domain: DOMAIN, secret: SECRET, maxBytes: 1024 * 1024 } } });
  h = site.h;
  mailbox = site.mailbox;
  notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
    batchSeconds: 0,
    logger: createLogger('silent'),
    intervalMs: 100,
    replies: { domain: DOMAIN, days: 30 },
  });
});
afterAll(async () => {
  await notify?.stop();
  await site?.close();
});

/** A reply as a mail client writes one: the answer, then the notification quoted under "… wrote:". */
async function replyMime(to: Mail, fields: { from: string; text: string; messageId?: string; headers?: object }) {
  const quoted = to.text
    .slice(to.text.indexOf('\n\n'))
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
  const composer = new MailComposer({
    from: fields.from,
    to: mailHeader(to, 'Reply-To'),
    subject: `Re: ${mailHeader(to, 'Subject')}`,
    inReplyTo: mailHeader(to, 'Message-ID'),
    messageId: fields.messageId ?? `<${crypto.randomUUID()}@client.example>`,
    headers: fields.headers as Record<string, string>,
    text: `${fields.text}\n\nOn Mon, 30 Nov 2026 at 09:00, Answer <no-reply@localhost> wrote:\n${quoted}\n`,
  });
  return composer.compile().build();
}

const relay = (raw: Buffer | string, secret = SECRET) =>
  h.app.fetch(
    new Request('http://localhost/inbound/mail', {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'message/rfc822' },
      body: raw,
    }),
  );

const messagesOf = (text: string) =>
  rows<{ author_id: number | null; text: string }>(h, 'select author_id, text from message where text like ?', [
    `%${text}%`,
  ]);

describe('a notification answered by mail', () => {
  let notice: Mail;

  it('names a reply address of its own, and says where to write', async () => {
    expect((await new Visitor(h, HOST).reply('kitchen', { text: 'Is the oven fixed?' })).status).toBe(303);
    notice = await mailTo(mailbox, 'pat@client.example', /Is the oven fixed/);
    expect(mailHeader(notice, 'Reply-To')).toMatch(/^reply\+[a-z2-7]{26}@reply\.answer\.example\.com$/);
    expect(mailHeader(notice, 'Message-ID')).toMatch(/^<[a-z2-7]{26}@reply\.answer\.example\.com>$/);
    expect(notice.text).toContain('## Reply above this line ##');
    // Only the token's hash is kept.
    const token = /reply\+([a-z2-7]{26})@/.exec(mailHeader(notice, 'Reply-To') ?? '')?.[1] ?? '';
    const kept = await rows<{ token_hash: string }>(h, 'select token_hash from reply_address', []);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.map((k) => k.token_hash).join()).not.toContain(token);
  });

  it('posts the answer as its person, without the quoted mail, once however often it comes', async () => {
    const raw = await replyMime(notice, { from: 'Pat Client <PAT@client.example>', text: 'Yes, fixed on Tuesday.' });
    const res = await relay(raw);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ outcome: 'posted' });
    const [pat] = await rows<{ id: number }>(h, "select id from account_user where email = 'pat@client.example'", []);
    const posted = await messagesOf('fixed on Tuesday');
    expect(posted).toEqual([{ author_id: pat?.id, text: 'Yes, fixed on Tuesday.' }]);
    // The others are told of it as of any reply.
    const told = await mailTo(mailbox, 'olivia@answer.example', /fixed on Tuesday/);
    expect(told.text).toContain('Pat Client');
    // The relay's retry of the same mail.
    expect(await (await relay(raw)).json()).toMatchObject({ outcome: 'dropped' });
    expect(await messagesOf('fixed on Tuesday')).toHaveLength(1);
  });

  it('posts nothing from another sender, from an auto-responder, or to an address it did not issue', async () => {
    const stranger = await relay(await replyMime(notice, { from: 'mallory@evil.example', text: 'Stranger words' }));
    expect(await stranger.json()).toMatchObject({ outcome: 'dropped' });
    const away = await relay(
      await replyMime(notice, {
        from: 'pat@client.example',
        text: 'I am away until Monday',
        headers: { 'Auto-Submitted': 'auto-replied' },
      }),
    );
    expect(await away.json()).toMatchObject({ outcome: 'dropped' });
    const raw = (await replyMime(notice, { from: 'pat@client.example', text: 'Guessed address' }))
      .toString()
      .replace(/reply\+[a-z2-7]{26}@/, 'reply+aaaaaaaaaaaaaaaaaaaaaaaaaa@');
    const guessed = await relay(raw.replace(/^In-Reply-To:.*\r?\n/im, ''));
    expect(guessed.status).toBe(404);
    expect(await guessed.json()).toMatchObject({ code: 'reply_address_not_found' });
    for (const words of ['Stranger words', 'I am away', 'Guessed address']) expect(await messagesOf(words)).toEqual([]);
  });

  it('refuses a relay without the secret, and answers an expired address with one polite mail', async () => {
    const raw = await replyMime(notice, { from: 'pat@client.example', text: 'Late answer' });
    expect((await relay(raw, 'wrong-secret-0123456789')).status).toBe(401);
    await rows(h, "update reply_address set expires_at = now() - interval '1 day'", []);
    expect(await (await relay(raw)).json()).toMatchObject({ outcome: 'bounced' });
    const bounce = await mailTo(mailbox, 'pat@client.example', /could not be posted/);
    expect(bounce.text).toMatch(/expired/);
    expect(mailHeader(bounce, 'Auto-Submitted')).toBe('auto-replied');
    // A second mail within the hour is refused too, without a second bounce.
    const again = await replyMime(notice, { from: 'pat@client.example', text: 'Later still' });
    expect(await (await relay(again)).json()).toMatchObject({ outcome: 'bounced' });
    await new Promise((r) => setTimeout(r, 1000));
    expect(
      mailbox.mails.filter((m) => m.to.includes('pat@client.example') && /could not be posted/.test(m.text)),
    ).toEqual([]);
    expect(await messagesOf('Late answer')).toEqual([]);
  });
});
