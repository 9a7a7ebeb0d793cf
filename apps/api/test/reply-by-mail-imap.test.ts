import type { TSeed } from '@convo/db';
import { ImapFlow } from 'imapflow';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startImapReplies } from '../src/workers/imap-replies.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { type Dovecot, hasDovecot, startDovecot } from './support/dovecot.ts';
import { type Harness, rows, until } from './support/harness.ts';
import { type Mail, type Mailbox, mailHeader } from './support/mailbox.ts';
import { mailTo, openPeopleSite, type PeopleSite } from './support/people.ts';
import { Visitor } from './support/site.ts';

/*
 * Reply by e-mail without an MX (issue 44): the answers land in a mailbox, a real IMAP server
 * (Debian's Dovecot, started by the test), which the server polls with imapflow: an answer is
 * posted and deleted from the mailbox, a stranger's is deleted without a post, and the mailbox
 * ends empty.
 */

if (!hasDovecot()) {
  console.warn('reply-by-mail-imap.test.ts: skipped: Dovecot is not installed (Debian: dovecot-imapd; CI installs it)');
}

const HOST = 'https://poll.example.com';
const DOMAIN = 'reply.poll.example.com';
const RECEIVING = { domain: DOMAIN, perPersonPerHour: 60, perAccountPerHour: 5000 };

const SEED: TSeed = {
  accounts: [
    {
      key: 'poll',
      name: 'Poll',
      host: HOST,
      owner: 'olivia@poll.example',
      users: [
        { email: 'olivia@poll.example', name: 'Olivia Owner' },
        { email: 'pat@client.example', name: 'Pat Client' },
      ],
      conversations: [{ title: 'Garden', slug: 'garden', members: ['olivia@poll.example', 'pat@client.example'] }],
    },
  ],
};

describe.skipIf(!hasDovecot())('the reply mailbox, polled over IMAP', () => {
  let site: PeopleSite;
  let h: Harness;
  let mailbox: Mailbox;
  let notify: QueueWorker;
  let dovecot: Dovecot;
  let poller: QueueWorker;
  let imapUrl: string;

  beforeAll(async () => {
    dovecot = await startDovecot();
    imapUrl = `imap://${dovecot.user}:${dovecot.password}@127.0.0.1:${dovecot.port}/INBOX`;
    site = await openPeopleSite(SEED);
    h = site.h;
    mailbox = site.mailbox;
    notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
      batchSeconds: 0,
      logger: createLogger('silent'),
      intervalMs: 100,
      replies: { domain: DOMAIN, days: 30 },
    });
    poller = startImapReplies(h.services, RECEIVING, {
      url: imapUrl,
      intervalMs: 200,
      maxBytes: 1024 * 1024,
      logger: createLogger('silent'),
    });
  }, 60_000);
  afterAll(async () => {
    await poller?.stop();
    await notify?.stop();
    await site?.close();
    await dovecot?.stop();
  });

  /** A client of the test's mailbox, as a mail program would connect. */
  async function imapClient(): Promise<ImapFlow> {
    const client = new ImapFlow({
      host: '127.0.0.1',
      port: dovecot.port,
      secure: false,
      auth: { user: dovecot.user, pass: dovecot.password },
      logger: false,
    });
    await client.connect();
    return client;
  }

  /** Delivers a mail into the mailbox as a mail server would: appended, unseen. */
  async function deliver(raw: Buffer) {
    const client = await imapClient();
    try {
      await client.append('INBOX', raw, []);
    } finally {
      await client.logout();
    }
  }

  async function inMailbox(): Promise<number> {
    const client = await imapClient();
    try {
      const status = await client.status('INBOX', { messages: true });
      return status ? (status.messages ?? 0) : 0;
    } finally {
      await client.logout();
    }
  }

  const answer = (notice: Mail, from: string, text: string) =>
    new MailComposer({
      from,
      to: mailHeader(notice, 'Reply-To'),
      subject: 'Re: the garden',
      inReplyTo: mailHeader(notice, 'Message-ID'),
      text: `${text}\n\nOn Sunday, Poll wrote:\n> ## Reply above this line ##\n> The roses?\n`,
    })
      .compile()
      .build();

  it('posts an answer that landed in the mailbox, forgets a stranger’s, and empties the mailbox', async () => {
    expect((await new Visitor(h, HOST).reply('garden', { text: 'The roses?' })).status).toBe(303);
    const notice = await mailTo(mailbox, 'pat@client.example', /The roses/);
    await deliver(await answer(notice, 'mallory@evil.example', 'Dig them up'));
    await deliver(await answer(notice, 'Pat Client <pat@client.example>', 'They bloom in June.'));
    await until(async () => (await inMailbox()) === 0, 15_000);
    const posted = await rows<{ text: string }>(h, "select text from message where text like 'They bloom%'", []);
    expect(posted).toEqual([{ text: 'They bloom in June.' }]);
    expect(await rows(h, "select 1 from message where text like 'Dig them%'", [])).toEqual([]);
  });
});
