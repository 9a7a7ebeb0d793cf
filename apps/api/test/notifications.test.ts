import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSeed, type TSeed } from '@convo/db';
import { muteToken, sendNotifications } from '@convo/domain';
import { notificationHtml, signInLinks } from '@convo/pages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { startNotifyWorker } from '../src/workers/notify.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { type Harness, openHarness } from './support/harness.ts';
import { type Mail, type Mailbox, mailHeader } from './support/mailbox.ts';
import { mailTo, oneClick, openPeopleSite, type PeopleSite, signIn, unsubscribeLink } from './support/people.ts';
import { Visitor } from './support/site.ts';

/*
 * People told that someone answered: through the real mail worker and an in-process SMTP server,
 * batched per person and conversation, never to the author, stopped in one click (RFC 8058) or on
 * the settings page, and followed from a public conversation's page.
 */

const HOST = 'https://post.example.com';
const FIXTURES = new URL('./fixtures/media/', import.meta.url).pathname;
const BATCH_SECONDS = 2;
/** Long enough for a batch to fall due, be queued and be sent. */
const SETTLE_MS = BATCH_SECONDS * 1000 + 1500;

let site: PeopleSite;
let h: Harness;
let mailbox: Mailbox;
let notify: QueueWorker;

const members = Array.from({ length: 50 }, (_, i) => ({ email: `m${i}@crowd.example`, name: `Member ${i}` }));

const SEED: TSeed = {
  accounts: [
    {
      key: 'post',
      name: 'Post',
      host: HOST,
      owner: 'olivia@post.example',
      users: [
        { email: 'olivia@post.example', name: 'Olivia Owner' },
        { email: 'sam@post.example', name: 'Sam Support', team: 'member' },
        { email: 'fay@else.example', name: 'Fay Follower' },
        ...members,
      ],
      conversations: [
        { title: 'Thread', slug: 'thread', members: ['olivia@post.example', 'sam@post.example'] },
        { title: 'Quiet', slug: 'quiet', anyone_can_post: false, members: ['olivia@post.example'] },
        { title: 'One', slug: 'one', members: ['olivia@post.example'] },
        { title: 'Crowd', slug: 'crowd', members: members.map((m) => m.email) },
      ],
    },
  ],
};

beforeAll(async () => {
  site = await openPeopleSite(SEED);
  h = site.h;
  mailbox = site.mailbox;
  notify = startNotifyWorker(h.services.notifications, h.services.secrets, {
    batchSeconds: BATCH_SECONDS,
    logger: createLogger('silent'),
    intervalMs: 100,
  });
});
afterAll(async () => {
  await notify?.stop();
  await site?.close();
});

const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const mailsTo = (to: string): Mail[] => mailbox.mails.filter((m) => m.to.includes(to));
const signedIn = (email: string) => signIn(site, HOST, email);

describe('a reply notifies the members', () => {
  it('sends one mail for three quick anonymous replies, with every one of them, to each member', async () => {
    for (const text of ['First of three', 'Second of three', 'Third of three']) {
      expect((await new Visitor(h, HOST).reply('thread', { text })).status).toBe(303);
    }
    const mail = await mailbox.next('olivia@post.example');
    expect(mail.text).toContain('3 new messages in "Thread" on Post');
    for (const text of ['First of three', 'Second of three', 'Third of three'])
      expect(mail.text).toContain(`> ${text}`);
    expect(mail.text).toContain(`${HOST}/c/thread#message-`);
    expect(mailHeader(mail, 'List-Unsubscribe')).toMatch(new RegExp(`^<${HOST}/unsubscribe/[\\w.-]+>$`));
    expect(mailHeader(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(mail.text).toMatch(/Content-Type: text\/html/i);
    await mailbox.next('sam@post.example');
    await settle();
    expect(mailsTo('olivia@post.example')).toEqual([]);
  });

  it('does not tell the author, and shows the team badge in the mail', async () => {
    const sam = await signedIn('sam@post.example');
    expect((await sam.reply('thread', { text: 'Sam answers' })).status).toBe(303);
    const mail = await mailbox.next('olivia@post.example');
    expect(mail.text).toContain('Sam Support (Post team)');
    expect(mail.text).toContain('> Sam answers');
    await settle();
    expect(mailsTo('sam@post.example')).toEqual([]);
  });

  it('says a reply is in a thread, and links to it on the thread’s page', async () => {
    const olivia = await signedIn('olivia@post.example');
    expect((await olivia.reply('thread', { text: 'Which day suits?' })).status).toBe(303);
    await mailbox.next('sam@post.example');
    const [root] = (await h.db.orm.em
      .fork()
      .getConnection()
      .execute("select id from message where text = 'Which day suits?'")) as { id: number }[];
    const sam = await signedIn('sam@post.example');
    const posted = await sam.reply('thread', { parent: String(root?.id), text: 'Tuesday' });
    const id = /#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1];
    const mail = await mailbox.next('olivia@post.example');
    expect(mail.text).toContain('Sam Support (Post team), replying in a thread,');
    expect(mail.text).toContain(`${HOST}/c/thread/m/${root?.id}#message-${id}`);
    expect(mail.text.replaceAll('=3D', '=')).toContain(`<a href="${HOST}/c/thread/m/${root?.id}#message-${id}">`);
  });

  it('writes an HTML part: the words escaped, a public video’s poster linked to it, a button to answer', async () => {
    const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xfe, 0x00, 0x04, 0x68, 0x69, 0xff, 0xd9]);
    const poster = `data:image/jpeg;base64,${Buffer.from(jpeg).toString('base64')}`;
    const video = {
      name: 'hi.webm',
      type: 'video/webm',
      bytes: new Uint8Array(readFileSync(join(FIXTURES, 'video-3s.webm'))),
    };
    const posted = await new Visitor(h, HOST).replyWithRecording('one', { text: '<b>Look</b> at this', poster }, video);
    expect(posted.status).toBe(303);
    const id = /#message-(\d+)$/.exec(posted.headers.get('location') ?? '')?.[1];
    // The HTML part as sent (quoted-printable '=' undone).
    const htmlOf = (mail: Mail) =>
      mail.text.slice(mail.text.search(/Content-Type: text\/html/i)).replaceAll('=3D', '=');
    const mail = htmlOf(await mailbox.next('olivia@post.example'));
    expect(mail).toContain(`<img src="${HOST}/media/post/${id}/poster?c=one"`);
    expect(mail).toContain(`<a href="${HOST}/c/one#message-${id}">`);
    expect(mail).toContain('&lt;b&gt;Look&lt;/b&gt; at this');
    expect(mail).not.toContain('<b>Look</b>');
    expect(mail).toContain(`href="${HOST}/c/one#reply"`);
    // A private conversation's recording is never shown in a mail (a mail client would fetch it
    // without signing in): the same digest, private, has no image.
    const digest = {
      account: { id: 1, name: 'Post', host: HOST, key: 'post' },
      conversation: { id: 1, title: 'Quiet', slug: 'quiet', anyoneCanPost: false },
      recipient: { id: 1, name: 'Olivia', email: 'olivia@post.example' },
      startedVia: null,
      total: 1,
      plays: [],
      totalPlays: 0,
      reactions: [],
      totalReactions: 0,
      messages: [
        {
          id: 9,
          authorName: 'Pat',
          authorTeamRole: null,
          text: '',
          messageType: 'video',
          createdAt: 0n,
          poster: true,
          internal: false,
          parentId: null,
        },
      ],
    };
    const links = {
      muteUrl: `${HOST}/u/1`,
      muteAllUrl: `${HOST}/u/2`,
      mutePlaysUrl: `${HOST}/u/3`,
      mutePlaysAllUrl: `${HOST}/u/4`,
      settingsUrl: `${HOST}/settings`,
    };
    expect(notificationHtml(digest, links)).not.toContain('<img');
    expect(
      notificationHtml({ ...digest, conversation: { ...digest.conversation, anyoneCanPost: true } }, links),
    ).toContain(`<img src="${HOST}/media/post/9/poster?c=quiet"`);
  });

  it("costs the post no more statements with 50 members than with one (the mail is the worker's)", async () => {
    // Counted on an app of its own with no worker running: a worker's statements would mix in.
    const quiet = await openHarness({
      app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } } },
    });
    try {
      await loadSeed(quiet.db.orm.em.fork(), SEED);
      const count = async (slug: string) => {
        const v = new Visitor(quiet, HOST);
        await v.get(`/c/${slug}`);
        const before = quiet.statements.length;
        const r = await v.post(`/c/${slug}`, { csrf: v.hidden('csrf'), submit: v.hidden('submit'), text: 'Counted' });
        expect(r.status).toBe(303);
        return quiet.statements.length - before;
      };
      // Each counted twice: the first post of a connection may prepare its statement.
      const one = [await count('one'), await count('one')];
      const crowd = [await count('crowd'), await count('crowd')];
      expect(crowd[1]).toBe(one[1]);
    } finally {
      await quiet.close();
    }
  });

  it('mails each of 50 members once', async () => {
    expect((await new Visitor(h, HOST).reply('crowd', { text: 'To the crowd' })).status).toBe(303);
    for (const m of members) expect((await mailbox.next(m.email)).text).toContain('> To the crowd');
    await settle();
    expect(mailbox.mails).toEqual([]);
  });

  it('gives each conversation its own link in mails sent together, and one link for all of them', async () => {
    for (const slug of ['thread', 'one']) {
      expect((await new Visitor(h, HOST).reply(slug, { text: `Together in ${slug}` })).status).toBe(303);
    }
    const [a, b] = [
      await mailTo(mailbox, 'olivia@post.example', /Together in thread/),
      await mailTo(mailbox, 'olivia@post.example', /Together in one/),
    ];
    await mailbox.next('sam@post.example');
    const line = (mail: Mail, starts: string) => mail.text.split('\n').find((l) => l.startsWith(starts)) ?? '';
    const all = (mail: Mail) => line(mail, 'No more mail from');
    expect(all(a)).toMatch(/\/unsubscribe\/\d+\.\d+\.0\./);
    expect(all(a)).toBe(all(b));
    expect(unsubscribeLink(a)).not.toBe(unsubscribeLink(b));
    expect(line(a, 'No more mail about this conversation')).toContain(unsubscribeLink(a));
    expect(line(b, 'No more mail about this conversation')).toContain(unsubscribeLink(b));
  });
});

describe('stopping the mail', () => {
  it('one click (RFC 8058) stops the next mail about that conversation; a GET only asks', async () => {
    expect((await new Visitor(h, HOST).reply('thread', { text: 'Before the click' })).status).toBe(303);
    const mail = await mailTo(mailbox, 'olivia@post.example', /Before the click/);
    await mailbox.next('sam@post.example');
    const link = unsubscribeLink(mail);
    // A mail scanner's GET shows a page and changes nothing.
    const looked = await h.app.fetch(new Request(link));
    expect(looked.status).toBe(200);
    expect(await looked.text()).toContain('Stop the e-mails');
    // The mail provider's POST: no cookie, no Origin, no CSRF token.
    const clicked = await oneClick(h, link);
    expect(clicked.status).toBe(200);
    expect((await new Visitor(h, HOST).reply('thread', { text: 'After the click' })).status).toBe(303);
    expect((await mailbox.next('sam@post.example')).text).toContain('> After the click');
    await settle();
    expect(mailsTo('olivia@post.example')).toEqual([]);
    // Other conversations still mail her.
    expect((await new Visitor(h, HOST).reply('one', { text: 'Elsewhere' })).status).toBe(303);
    expect((await mailbox.next('olivia@post.example')).text).toContain('> Elsewhere');
  });

  it('refuses a forged or altered link', async () => {
    const signedElsewhere = await muteToken('another-key', { accountId: 1, userId: 1, conversationId: 1, kind: 'all' });
    const key = await h.services.secrets.signingKey();
    const otherAccount = await muteToken(key, { accountId: 999_999, userId: 1, conversationId: 0, kind: 'all' });
    const valid = await muteToken(key, { accountId: 1, userId: 1, conversationId: 1, kind: 'all' });
    const altered = valid.replace(/^1\.1\./, '1.2.');
    for (const token of [`1.1.1.${'a'.repeat(43)}`, 'nonsense', '1.1.1', signedElsewhere, otherAccount, altered]) {
      const r = await h.app.fetch(new Request(`${HOST}/unsubscribe/${token}`, { method: 'POST', body: '' }));
      expect(r.status).toBe(404);
    }
  });

  it("the settings page turns all of the account's mail off and back on", async () => {
    const sam = await signedIn('sam@post.example');
    const settings = await sam.get('/settings');
    expect(settings.html).toContain('Stop all these e-mails');
    expect((await sam.post('/settings', { csrf: sam.hidden('csrf'), mail: 'off' })).status).toBe(303);
    expect((await new Visitor(h, HOST).reply('thread', { text: 'Nobody hears' })).status).toBe(303);
    await settle();
    expect(mailsTo('sam@post.example')).toEqual([]);
    await sam.get('/settings');
    expect((await sam.post('/settings', { csrf: sam.hidden('csrf'), mail: 'on' })).status).toBe(303);
    expect((await new Visitor(h, HOST).reply('thread', { text: 'Heard again' })).status).toBe(303);
    expect((await mailbox.next('sam@post.example')).text).toContain('> Heard again');
  });

  it('asks a visitor who is not signed in to sign in, and brings them back', async () => {
    const page = await new Visitor(h, HOST).get('/settings');
    expect(page.status).toBe(200);
    expect(page.html).toContain('href="/sign-in?return=/settings"');
  });
});

describe('following', () => {
  it('anyone signed in follows a public conversation from its page and is told of its replies', async () => {
    const fay = await signedIn('fay@else.example');
    const page = await fay.get('/c/thread');
    expect(page.html).toContain('Follow by e-mail');
    expect((await fay.post('/c/thread/mail', { csrf: fay.hidden('csrf'), choice: 'follow' })).status).toBe(303);
    expect((await fay.get('/c/thread')).html).toContain('Stop e-mails about this conversation');
    expect((await new Visitor(h, HOST).reply('thread', { text: 'For the followers' })).status).toBe(303);
    expect((await mailbox.next('fay@else.example')).text).toContain('> For the followers');
  });

  it('is not offered on a private conversation, and a stranger cannot choose anything there', async () => {
    const olivia = await signedIn('olivia@post.example');
    expect((await olivia.get('/c/quiet')).html).not.toContain('Follow by e-mail');
    expect((await olivia.post('/c/quiet/mail', { csrf: olivia.hidden('csrf'), choice: 'follow' })).status).toBe(422);
    const fay = await signedIn('fay@else.example');
    await fay.get('/c/thread');
    expect((await fay.post('/c/quiet/mail', { csrf: fay.hidden('csrf'), choice: 'follow' })).status).toBe(404);
  });
});

describe('a conversation started on an intake page', () => {
  const FRONT = 'https://front.example.com';
  /** Front's own site, with Sam on the team and a contact page whose team is Sam. */
  const frontSite = () =>
    openPeopleSite({
      accounts: [
        {
          key: 'front',
          name: 'Front',
          host: FRONT,
          owner: 'olivia@front.example',
          users: [
            { email: 'olivia@front.example', name: 'Olivia Owner' },
            { email: 'sam@front.example', name: 'Sam Support', team: 'member' },
          ],
          intake_pages: [{ name: 'Contact us', key: 'contact', allow_anonymous: true, team: ['sam@front.example'] }],
        },
      ],
    });
  /** A visitor's start on the contact page under a name and an address. */
  const startOn = async (own: PeopleSite, fields: { name: string; email: string; text: string }) => {
    const v = new Visitor(own.h, FRONT);
    await v.get('/p/contact');
    const started = await v.post('/p/contact', { csrf: v.hidden('csrf'), submit: v.hidden('submit'), ...fields });
    expect(started.status, started.html.match(/role="alert">[^<]*/)?.[0]).toBe(303);
    return (started.headers.get('location') ?? '').replace(/^\/c\//, '').replace(/[#?].*$/, '');
  };

  it('tells the page’s team at once, as news of its own; what follows waits for the batch', async () => {
    // Its own site, with a batch of an hour: only a mail sent at once arrives in this test.
    const own = await frontSite();
    const worker = startNotifyWorker(own.h.services.notifications, own.h.services.secrets, {
      batchSeconds: 3600,
      logger: createLogger('silent'),
      intervalMs: 100,
    });
    try {
      const slug = await startOn(own, {
        name: 'Tom Tester',
        email: 'tom@visitor.example',
        text: 'I need help with my invoice',
      });
      const mail = await own.mailbox.next('sam@front.example');
      expect(mailHeader(mail, 'Subject')).toBe(
        'New conversation from Tom Tester (not verified) via Contact us on Front',
      );
      expect(mail.text).toContain('> I need help with my invoice');
      // The owner answers: batched, so nothing more to Sam within the hour.
      const olivia = await signIn(own, FRONT, 'olivia@front.example');
      expect((await olivia.reply(slug, { text: 'On it' })).status).toBe(303);
      await new Promise((r) => setTimeout(r, 1500));
      expect(own.mailbox.mails.filter((m) => m.to.includes('sam@front.example'))).toEqual([]);
    } finally {
      await worker.stop();
      await own.close();
    }
  });

  it('mails the visitor their link back from a round after the answer, and loses nothing when the round fails', async () => {
    // No notification worker: the rounds are run here, one at a time.
    const own = await frontSite();
    const rows = (sql: string) => own.h.db.orm.em.fork().getConnection().execute(sql);
    const round = (links: typeof signInLinks) =>
      sendNotifications(own.h.services.notifications, own.h.services.secrets, { batchSeconds: 3600, links });
    try {
      const slug = await startOn(own, { name: 'Una Later', email: 'una@visitor.example', text: 'Is anyone there?' });
      // Answered with the event that asks for the link, and nothing else for the address yet.
      const asked = `select come_back_email from notify_event where come_back_email = 'una@visitor.example'`;
      expect(await rows(asked)).toHaveLength(1);
      expect(await rows(`select id from sign_in_link where email = 'una@visitor.example'`)).toEqual([]);
      // A round that cannot make the link takes nothing: the event waits for the next one.
      const failing = (account: Parameters<typeof signInLinks>[0]) => ({
        ...signInLinks(account),
        newToken: () => {
          throw new Error('no randomness today');
        },
      });
      await expect(round(failing)).rejects.toThrow('no randomness today');
      expect(await rows(asked)).toHaveLength(1);
      expect(await rows(`select id from sign_in_link where email = 'una@visitor.example'`)).toEqual([]);
      // The next round makes the link (for the start's message) and queues its mail, once.
      await round(signInLinks);
      expect(await rows(asked)).toEqual([]);
      const links = await rows(
        `select l.claim_message_id, l.name, l.return_path, m.text from sign_in_link l
         join message m on m.id = l.claim_message_id where l.email = 'una@visitor.example'`,
      );
      expect(links).toEqual([
        {
          claim_message_id: expect.any(Number),
          name: 'Una Later',
          return_path: `/c/${slug}`,
          text: 'Is anyone there?',
        },
      ]);
      const mail = await mailTo(own.mailbox, 'una@visitor.example', /Confirm your conversation|confirms it/);
      expect(mailHeader(mail, 'Subject')).toBe('Confirm your conversation with Front');
      expect(mail.text).toContain(`${FRONT}/sign-in/`);
      await round(signInLinks);
      expect(await rows(`select id from sign_in_link where email = 'una@visitor.example'`)).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});
