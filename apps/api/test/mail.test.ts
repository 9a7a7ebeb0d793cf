import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './support/harness.ts';
import { deliverMailTo, type Mailbox } from './support/mailbox.ts';

/*
 * The mail the server sends, as an SMTP server receives it: one Subject line whatever the text
 * held, a plain-text part and an HTML part in which nothing a person wrote is markup.
 */

let h: Harness;
let mailbox: Mailbox;
let close: () => Promise<void>;

beforeAll(async () => {
  h = await openHarness();
  const delivery = await deliverMailTo(h.services);
  mailbox = delivery.mailbox;
  close = delivery.close;
});
afterAll(async () => {
  await close?.();
  await h?.close();
});

/** An account to send mail for; its id. */
async function account(key: string): Promise<number> {
  const [made] = (await h.db.orm.em
    .fork()
    .getConnection()
    .execute(`insert into account (key, name, host) values (?, ?, ?) returning id`, [
      key,
      key,
      `https://${key}.example`,
    ])) as { id: number }[];
  return made?.id ?? 0;
}

describe('mail', () => {
  it('keeps a subject on one line, so no header can be added through it, and escapes the HTML part', async () => {
    await h.services.outbox.enqueue(await account('mail'), {
      to: 'reader@mail.example',
      subject: 'Sign in to Evil\r\nBcc: intruder@evil.example\r\nX-Injected: yes',
      text: 'Hello <script>alert(1)</script>\n> quoted & more',
    });
    const mail = await mailbox.next('reader@mail.example');
    expect(mail.to).toEqual(['reader@mail.example']);
    const head = mail.text.slice(0, mail.text.search(/\r?\n\r?\n/));
    expect(head).not.toMatch(/^(bcc|x-injected):/im);
    expect(head).toMatch(/^Subject: Sign in to Evil Bcc: intruder@evil\.example X-Injected: yes$/m);
    expect(mail.text).toMatch(/Content-Type: text\/plain/i);
    expect(mail.text).toMatch(/Content-Type: text\/html/i);
    expect(mail.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.text).toContain('&gt; quoted &amp; more');
    // The plain part says it as it was written.
    expect(mail.text).toContain('Hello <script>alert(1)</script>');
  });

  it('takes mails out of the queue once delivered, several at a time, and keeps nothing of them', async () => {
    const id = await account('batch');
    const to = ['one', 'two', 'three'].map((n) => `${n}@batch.example`);
    await Promise.all(
      to.map((address) => h.services.outbox.enqueue(id, { to: address, subject: 'Hi', text: 'A link' })),
    );
    for (const address of to) await mailbox.next(address);
    const pending = async () =>
      h.db.orm.em.fork().getConnection().execute('select id from outgoing_mail where account_id = ?', [id]);
    const deadline = Date.now() + 5_000;
    while ((await pending()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await pending()).toEqual([]);
  });
});
