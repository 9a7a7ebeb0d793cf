import { timingSafeEqual } from 'node:crypto';
import { tokenFromAuthorization } from '@convo/domain';
import { errorAnswer, json } from './answers.ts';
import { readBody } from './body.ts';
import type { Services } from './services.ts';
import type { InboundSettings } from './settings.ts';

/*
 * `POST /inbound/mail`: a reply mail as raw MIME, from a relay that forwards mail by HTTP, with
 * `Authorization: Bearer <INBOUND_MAIL_SECRET>`. `?to=` may name the envelope's recipient when the
 * relay knows it (else the mail's own To, Cc, Delivered-To are read). The answer says what came
 * of the mail; a relay retries only a 503.
 */

const PATH = '/inbound/mail';

const sameSecret = (given: string | null, secret: string): boolean => {
  if (given === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
};

export function inboundMailEndpoint(services: Services, inbound: InboundSettings) {
  return async (req: Request, url: URL): Promise<Response> => {
    if (!inbound.secret) return errorAnswer(PATH, 'route_not_found');
    if (!sameSecret(tokenFromAuthorization(req.headers.get('authorization')), inbound.secret)) {
      return errorAnswer(PATH, 'unauthorized', 'the relay secret (INBOUND_MAIL_SECRET) is missing or wrong', {
        'www-authenticate': 'Bearer',
      });
    }
    const raw = await readBody(req, { maxBytes: inbound.maxBytes, timeoutMs: 60_000 });
    const to = url.searchParams.getAll('to').filter((t) => t.length <= 320);
    // The MIME parser and reply trimmer load with the first mail: a server that takes none never holds them.
    const { receiveMail } = await import('../mail/receive.ts');
    const outcome = await receiveMail(services, inbound, Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
      from: null,
      to,
    });
    switch (outcome.kind) {
      case 'unknown':
        return errorAnswer(PATH, 'reply_address_not_found');
      case 'later':
        return errorAnswer(PATH, 'unavailable', outcome.reason, { 'retry-after': '60' });
      case 'limited':
        return errorAnswer(PATH, 'rate_limited', outcome.reason, { 'retry-after': String(outcome.retrySeconds) });
      case 'posted':
        return json(200, { outcome: 'posted', message_id: outcome.messageId });
      case 'dropped':
      case 'bounced':
        return json(200, { outcome: outcome.kind, reason: outcome.reason });
    }
  };
}
