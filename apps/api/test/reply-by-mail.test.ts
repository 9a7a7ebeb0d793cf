import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgReplyAddressStore, type TSeed } from '@convo/db';
import dns2 from 'dns2';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { Attachment } from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { type SmtpListener, startSmtpListener } from '../src/mail/smtp-listener.ts';
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
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const MAIL_FIXTURES = new URL('./fixtures/mail/', import.meta.url).pathname;
const DOMAIN = 'reply.answer.example.com';
const SECRET = 'relay-secret-0123456789';
const RECEIVING = { domain: DOMAIN, perPersonPerHour: 60, perAccountPerHour: 5000 };

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
  site = await openPeopleSite(SEED, { app: { inbound: { ...RECEIVING, secret: SECRET, maxBytes: 1024 * 1024 } } });
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
interface ReplyFields {
  from: string;
  text: string;
  messageId?: string;
  headers?: Record<string, string>;
  attachments?: Attachment[];
}

async function replyMime(to: Mail, fields: ReplyFields) {
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
    headers: fields.headers,
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
    // A month past its end the purge forgets the address: an answer then is to no address of ours.
    await rows(h, "update reply_address set expires_at = now() - interval '31 days'", []);
    await new PgReplyAddressStore(h.db.orm.em.fork()).purge();
    expect((await relay(await replyMime(notice, { from: 'pat@client.example', text: 'Much later' }))).status).toBe(404);
  });
});

describe('the SMTP listener', () => {
  let listener: SmtpListener;
  let notice: Mail;
  const send = (mail: Mail, fields: ReplyFields, to?: string) =>
    nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true }).sendMail({
      envelope: { from: fields.from, to: to ?? mailHeader(mail, 'Reply-To') ?? '' },
      from: fields.from,
      to: to ?? mailHeader(mail, 'Reply-To'),
      subject: `Re: ${mailHeader(mail, 'Subject')}`,
      inReplyTo: mailHeader(mail, 'Message-ID'),
      text: fields.text,
      attachments: fields.attachments,
    });

  beforeAll(async () => {
    listener = await startSmtpListener(h.services, RECEIVING, {
      port: 0,
      host: '127.0.0.1',
      tls: null,
      maxBytes: 256 * 1024,
      logger: createLogger('silent'),
    });
    expect((await new Visitor(h, HOST).reply('kitchen', { text: 'When can you come?' })).status).toBe(303);
    notice = await mailTo(mailbox, 'pat@client.example', /When can you come/);
  });
  afterAll(() => listener?.close());

  it('takes an answer for a reply address, and a voice memo as its recording', async () => {
    await send(notice, { from: 'pat@client.example', text: 'Thursday morning works.' });
    expect(await messagesOf('Thursday morning')).toHaveLength(1);
    // On the page as soon as the mail is taken in, under the person's name.
    const page = await new Visitor(h, HOST).get('/c/kitchen');
    expect(page.html).toContain('Thursday morning works.');
    expect(page.html).toContain('Pat Client');
    await send(notice, {
      from: 'pat@client.example',
      text: 'Here is a voice memo.',
      attachments: [{ filename: 'memo.m4a', contentType: 'audio/mp4', path: `${FIXTURES}/audio-3s.m4a` }],
    });
    const [memo] = await rows<{ message_type: string; media_key: string | null }>(
      h,
      "select message_type, media_key from message where text = 'Here is a voice memo.'",
      [],
    );
    expect(memo?.message_type).toBe('audio');
    expect(memo?.media_key).not.toBeNull();
  });

  it('refuses an address it did not issue at RCPT TO, a mail over the limit, and a stranger', async () => {
    const unknown = send(notice, { from: 'pat@client.example', text: 'x' }, `reply+${'b'.repeat(26)}@${DOMAIN}`);
    await expect(unknown).rejects.toMatchObject({ responseCode: 550 });
    const other = send(notice, { from: 'pat@client.example', text: 'x' }, 'someone@elsewhere.example');
    await expect(other).rejects.toMatchObject({ responseCode: 550 });
    const big = send(notice, { from: 'pat@client.example', text: `Too long ${'words '.repeat(60_000)}` });
    await expect(big).rejects.toMatchObject({ responseCode: 552 });
    const stranger = send(notice, { from: 'mallory@evil.example', text: 'Let me in' });
    await expect(stranger).rejects.toMatchObject({ responseCode: 550 });
    expect(await messagesOf('Too long')).toEqual([]);
    expect(await messagesOf('Let me in')).toEqual([]);
  });

  it.skipIf(!existsSync('/usr/bin/openssl'))('offers STARTTLS with the certificate it is given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convo-smtp-tls-'));
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    execFileSync(
      '/usr/bin/openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    const secure = await startSmtpListener(h.services, RECEIVING, {
      port: 0,
      host: '127.0.0.1',
      tls: { cert, key },
      maxBytes: 256 * 1024,
      logger: createLogger('silent'),
    });
    try {
      const sent = await nodemailer
        .createTransport({
          host: '127.0.0.1',
          port: secure.port,
          secure: false,
          requireTLS: true,
          tls: { rejectUnauthorized: false },
        })
        .sendMail({
          from: 'pat@client.example',
          to: mailHeader(notice, 'Reply-To'),
          subject: 'Re',
          text: 'Sent over TLS.',
        });
      expect(sent.accepted).toHaveLength(1);
      expect(await messagesOf('Sent over TLS')).toHaveLength(1);
    } finally {
      await secure.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('slows a flood from one person: past the hour’s limit the sender is told to try later', async () => {
    // Pat's mail this hour is past a limit of one: the sender's server keeps the mail and retries.
    const strict = await startSmtpListener(
      h.services,
      { ...RECEIVING, perPersonPerHour: 1 },
      { port: 0, host: '127.0.0.1', tls: null, maxBytes: 256 * 1024, logger: createLogger('silent') },
    );
    try {
      const flood = nodemailer
        .createTransport({ host: '127.0.0.1', port: strict.port, secure: false, ignoreTLS: true })
        .sendMail({
          from: 'pat@client.example',
          to: mailHeader(notice, 'Reply-To'),
          subject: 'Re: again',
          text: 'One more flood mail',
        });
      await expect(flood).rejects.toMatchObject({ responseCode: 451 });
      expect(await messagesOf('One more flood mail')).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe('answers as mail clients write them', () => {
  let notice: Mail;
  const fixture = (name: string, mail: Mail, from = 'pat@client.example') =>
    readFileSync(join(MAIL_FIXTURES, name), 'utf8')
      .replaceAll('IN_REPLY_TO', (mailHeader(mail, 'Message-ID') ?? '').replace(/^<|>$/g, ''))
      .replaceAll('REPLY_TO', mailHeader(mail, 'Reply-To') ?? '')
      .replaceAll('FROM', from);

  beforeAll(async () => {
    expect((await new Visitor(h, HOST).reply('kitchen', { text: 'Is the oven fixed?' })).status).toBe(303);
    notice = await mailTo(mailbox, 'pat@client.example', /Is the oven fixed/);
  });

  it.each([
    ['gmail-html.eml', 'The plumber comes on Friday at 8.'],
    ['outlook-html.eml', 'The oven works again, thank you.'],
    ['apple-mail-html.eml', 'Great, I’ll be home all day.'],
  ])('posts the answer of an HTML-only %s without its quote or signature', async (name, answer) => {
    expect(await (await relay(fixture(name, notice))).json()).toMatchObject({ outcome: 'posted' });
    const [posted] = await messagesOf(answer);
    expect(posted?.text.startsWith(answer)).toBe(true);
    expect(posted?.text).not.toMatch(/oven fixed|wrote:|Reply above|Sent from my|From:/);
  });

  it('finds the conversation by In-Reply-To when the address lost its token, for its own person only', async () => {
    const lost = (from: string) =>
      fixture('gmail-html.eml', notice, from)
        .replace(/^To: .*$/m, `To: reply@${DOMAIN}`)
        .replace('<CAGmail7Xq2@mail.gmail.com>', `<${crypto.randomUUID()}@mail.gmail.com>`)
        .replace('The plumber comes', `${from} says the plumber comes`);
    expect(await (await relay(lost('pat@client.example'))).json()).toMatchObject({ outcome: 'posted' });
    expect(await messagesOf('pat@client.example says')).toHaveLength(1);
    // Olivia was sent no mail with that Message-ID: by References, her mail finds nothing.
    expect((await relay(lost('olivia@answer.example'))).status).toBe(404);
    expect(await messagesOf('olivia@answer.example says')).toEqual([]);
  });

  it('drops a delivery report to a reply address without posting or answering it', async () => {
    const bounce = [
      // From the person's own address, so only its report shape can stop it.
      'From: Pat Client <pat@client.example>',
      `To: ${mailHeader(notice, 'Reply-To')}`,
      'Return-Path: <>',
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <${crypto.randomUUID()}@client.example>`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'Delivery failed for pat@client.example.',
      '--b1--',
      '',
    ].join('\r\n');
    expect(await (await relay(bounce)).json()).toMatchObject({
      outcome: 'dropped',
      reason: expect.stringMatching(/not a person's reply/),
    });
    expect(await messagesOf('Delivery failed')).toEqual([]);
  });

  it('reflects nothing of a sender’s name or subject into the mail it causes', async () => {
    // A display name and subject that decode to line breaks and a header of their own.
    const injected = `=?utf-8?b?${Buffer.from('Pat\r\nBcc: victim@evil.example').toString('base64')}?=`;
    const raw = (await replyMime(notice, { from: 'pat@client.example', text: 'Injected name test.' }))
      .toString()
      .replace(/^From: .*$/m, `From: ${injected} <pat@client.example>`)
      .replace(/^Subject: .*$/m, `Subject: ${injected}`);
    expect(await (await relay(raw)).json()).toMatchObject({ outcome: 'posted' });
    const told = await mailTo(mailbox, 'olivia@answer.example', /Injected name test/);
    expect(told.text).toContain('Pat Client');
    expect(told.text).not.toMatch(/^Bcc:/im);
    expect(told.to).not.toContain('victim@evil.example');
  });

  it('keeps an answer to a thread’s notification in that thread', async () => {
    const [root] = await rows<{ id: number }>(
      h,
      "select id from message where text = 'Is the oven fixed?' limit 1",
      [],
    );
    const visitor = new Visitor(h, HOST);
    expect((await visitor.reply('kitchen', { parent: String(root?.id), text: 'Which oven?' })).status).toBe(303);
    const threadNotice = await mailTo(mailbox, 'pat@client.example', /Which oven/);
    const raw = await replyMime(threadNotice, { from: 'pat@client.example', text: 'The big one.' });
    expect(await (await relay(raw)).json()).toMatchObject({ outcome: 'posted' });
    const [posted] = await rows<{ parent_id: number | null }>(
      h,
      "select parent_id from message where text = 'The big one.'",
      [],
    );
    expect(posted?.parent_id).toBe(root?.id);
  });
});

describe('SPF, DKIM and DMARC, where the operator checks them', () => {
  let dns: ReturnType<typeof dns2.createServer>;
  let listener: SmtpListener;
  let notice: Mail;
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKey = keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  // client.example's DNS: no server may send its mail (SPF -all), DMARC rejects what fails, and
  // selector s1's DKIM key.
  const TXT: Record<string, string[]> = {
    'client.example': ['v=spf1 -all'],
    '_dmarc.client.example': ['v=DMARC1; p=reject'],
    's1._domainkey.client.example': `v=DKIM1; k=rsa; p=${publicKey}`.match(/.{1,255}/g) ?? [],
  };

  beforeAll(async () => {
    dns = dns2.createServer({
      udp: true,
      handle: (request, send) => {
        const response = dns2.Packet.createResponseFromRequest(request);
        const [question] = request.questions;
        const data = question ? TXT[question.name.toLowerCase()] : undefined;
        if (question && data && question.type === dns2.Packet.TYPE.TXT) {
          response.answers.push(dns2.Packet.createResourceFromQuestion(question, { ttl: 60, data }));
        }
        send(response);
      },
    });
    const bound = await dns.listen({ udp: { port: 0, address: '127.0.0.1' } });
    listener = await startSmtpListener(
      h.services,
      { ...RECEIVING, auth: { dnsServers: [`127.0.0.1:${bound.udp?.port}`] } },
      { port: 0, host: '127.0.0.1', tls: null, maxBytes: 256 * 1024, logger: createLogger('silent') },
    );
    expect((await new Visitor(h, HOST).reply('kitchen', { text: 'Signed or not?' })).status).toBe(303);
    notice = await mailTo(mailbox, 'pat@client.example', /Signed or not/);
  });
  afterAll(async () => {
    await listener?.close();
    await dns?.close();
  });

  const send = (text: string, signed: boolean) =>
    nodemailer
      .createTransport({
        host: '127.0.0.1',
        port: listener.port,
        secure: false,
        ignoreTLS: true,
        ...(signed
          ? {
              dkim: {
                domainName: 'client.example',
                keySelector: 's1',
                privateKey: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
              },
            }
          : {}),
      })
      .sendMail({ from: 'pat@client.example', to: mailHeader(notice, 'Reply-To'), subject: 'Re', text });

  it('posts a mail its domain signed, and refuses one its domain disowns', async () => {
    await send('Signed by my domain.', true);
    expect(await messagesOf('Signed by my domain')).toHaveLength(1);
    await expect(send('Forged in my name.', false)).rejects.toMatchObject({ responseCode: 550 });
    expect(await messagesOf('Forged in my name')).toEqual([]);
  });
});
