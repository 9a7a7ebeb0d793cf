import { Resolver } from 'node:dns/promises';
import type { Envelope } from './read-reply.ts';

/*
 * Whether a reply mail is its sender domain's own (INBOUND_MAIL_AUTH): SPF, DKIM and DMARC as
 * mailauth (Postal Systems', the checks of EmailEngine and WildDuck) reads them. Refused: a mail
 * DMARC fails; where the domain publishes no DMARC, one whose SPF fails with no DKIM signature
 * holding. Over SMTP the connection's address, HELO and envelope sender are used; a mail that
 * came from a relay or a mailbox is judged by the Received header its first server added.
 */

export interface MailAuthOptions {
  /** Our own name, as the receiving MTA. */
  domain: string;
  /** DNS servers to ask (INBOUND_MAIL_AUTH_DNS); empty: the system's. */
  dnsServers: readonly string[];
}

/** Why the mail is not its sender domain's, or null when it holds (or nothing says otherwise). */
export async function authenticationProblem(
  raw: Buffer,
  envelope: Envelope | undefined,
  options: MailAuthOptions,
): Promise<string | null> {
  // mailauth and its DNS walks load with the first mail checked.
  const { authenticate } = await import('mailauth');
  let resolver: Resolver | null = null;
  if (options.dnsServers.length > 0) {
    resolver = new Resolver({ timeout: 5_000, tries: 2 });
    resolver.setServers([...options.dnsServers]);
  }
  const asked = resolver;
  const result = await authenticate(raw, {
    mta: options.domain,
    ...(envelope?.ip ? { ip: envelope.ip, helo: envelope.helo, sender: envelope.from ?? '' } : { trustReceived: true }),
    ...(asked ? { resolver: (name: string, type: string) => resolveText(asked, name, type) } : {}),
  });
  const dmarc = result.dmarc ? result.dmarc.status.result : 'none';
  if (dmarc === 'fail') return `its domain's DMARC policy refuses it (${result.dmarc ? result.dmarc.domain : ''})`;
  const dkimHolds = result.dkim.results.some((r) => r.status.result === 'pass');
  if (dmarc === 'none' && result.spf && result.spf.status.result === 'fail' && !dkimHolds) {
    return 'its domain’s SPF record does not allow the server that sent it, and no DKIM signature holds';
  }
  return null;
}

/**
 * A lookup through the configured servers, in the shapes mailauth takes (TXT as string arrays,
 * addresses and names as strings). MX is not asked: an SPF `mx` mechanism then matches nothing
 * (only with INBOUND_MAIL_AUTH_DNS; the system's resolver answers everything).
 */
async function resolveText(resolver: Resolver, name: string, type: string): Promise<string[][] | string[]> {
  if (type === 'TXT') return resolver.resolveTxt(name);
  if (type === 'A') return resolver.resolve4(name);
  if (type === 'AAAA') return resolver.resolve6(name);
  if (type === 'PTR') return resolver.resolvePtr(name);
  if (type === 'CNAME') return resolver.resolveCname(name);
  throw Object.assign(new Error(`no ${type} lookups here`), { code: 'ENOTFOUND' });
}
