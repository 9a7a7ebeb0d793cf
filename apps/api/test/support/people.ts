import { loadSeed, type TSeed } from '@convo/db';
import { expect } from 'vitest';
import { type Harness, type HarnessOptions, openHarness } from './harness.ts';
import { deliverMailTo, type Mail, type Mailbox, mailHeader, signInLink } from './mailbox.ts';
import { Visitor } from './site.ts';

/*
 * What the tests of the people side share: an app whose mail is received by a real SMTP server,
 * loaded with a seed, with form limits out of the way; and a person signed in by the mailed link.
 */

export interface PeopleSite {
  h: Harness;
  mailbox: Mailbox;
  close(): Promise<void>;
}

/**
 * `mailIntervalMs`: how often the mail worker looks on its own. A test that counts statements
 * makes it long, so that only the mail a request queues (which wakes it) sends any.
 */
export async function openPeopleSite(
  seed: TSeed,
  options: HarnessOptions = {},
  mailIntervalMs = 200,
): Promise<PeopleSite> {
  const h = await openHarness({
    ...options,
    app: { site: { limits: { perIpPerMinute: 1000, perEmailPer15Minutes: 1000 } }, ...options.app },
  });
  const delivery = await deliverMailTo(h.services, mailIntervalMs);
  await loadSeed(h.db.orm.em.fork(), seed);
  return {
    h,
    mailbox: delivery.mailbox,
    async close() {
      await delivery.close();
      await h.close();
    },
  };
}

/** The next mail to `to` that matches, leaving the others (notifications, invitations) to their own waits. */
export async function mailTo(mailbox: Mailbox, to: string, matching: RegExp): Promise<Mail> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const i = mailbox.mails.findIndex((m) => m.to.includes(to) && matching.test(m.text));
    if (i >= 0) return mailbox.mails.splice(i, 1)[0] as Mail;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${matching}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A person signed in on `host` through the link mailed to `email` (a new person gives `name`). */
export async function signIn(site: PeopleSite, host: string, email: string, name = 'New Person'): Promise<Visitor> {
  const v = new Visitor(site.h, host);
  await v.get('/sign-in');
  expect((await v.post('/sign-in', { csrf: v.hidden('csrf'), email, return: '/' })).status).toBe(200);
  const link = signInLink(await mailTo(site.mailbox, email, /\/sign-in\//));
  expect((await v.confirm(link, { name })).status).toBe(303);
  return v;
}

/** The mail's List-Unsubscribe address. */
export const unsubscribeLink = (mail: Mail): string => (mailHeader(mail, 'List-Unsubscribe') ?? '').slice(1, -1);

/** What a mail provider sends for RFC 8058's one click: a POST with no cookie, Origin or form token. */
export const oneClick = (h: Harness, link: string): Promise<Response> =>
  h.app.fetch(
    new Request(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    }),
  );
