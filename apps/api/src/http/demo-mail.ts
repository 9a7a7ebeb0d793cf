import { demoMailPage, type UnsentMail } from '@convo/pages';

/*
 * The demo's mail (`npm run demo` without SMTP_URL): each mail the server would have sent is kept
 * here (the newest 50, in memory) for the demo-only page `/_demo/mail`, and printed as a block a
 * person can read, its link on a line of its own.
 */

export class DemoMailbox {
  readonly #mails: UnsentMail[] = [];
  readonly #max: number;

  constructor(max = 50) {
    this.#max = max;
  }

  add(mail: UnsentMail): void {
    this.#mails.unshift(mail);
    this.#mails.length = Math.min(this.#mails.length, this.#max);
  }

  /** The page: to the machine the demo runs on only (it lists sign-in links). */
  page(fromLoopback: boolean): Response {
    if (!fromLoopback) {
      return new Response('The demo lists its mail to the machine it runs on only.\n', {
        status: 403,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      });
    }
    return new Response(demoMailPage(this.#mails), {
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy':
          "default-src 'none'; style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'none'",
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      },
    });
  }
}

/** A mail as the demo prints it: who, what, and its text, between two rules, pointing at the page. */
export function mailBlock(mail: UnsentMail, pageUrl: string): string {
  const rule = '─'.repeat(60);
  return [
    '',
    `${rule}`,
    `Mail to ${mail.to} (not sent: no SMTP_URL; also at ${pageUrl})`,
    `Subject: ${mail.subject}`,
    ...(mail.replyTo ? [`Reply-To: ${mail.replyTo}`] : []),
    '',
    mail.text.trimEnd(),
    rule,
    '',
  ].join('\n');
}
