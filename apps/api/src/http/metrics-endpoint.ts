import { timingSafeEqual } from 'node:crypto';
import { errorAnswer } from './answers.ts';
import type { Services } from './services.ts';

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * `/metrics` for the operator's scraper: not served at all without a token (`METRICS_TOKEN`), and
 * only to a request that sends it as a Bearer token.
 */
export function metricsEndpoint(services: Services, token: string | undefined) {
  return async (req: Request, path: string): Promise<Response> => {
    if (!token) return errorAnswer(path, 'route_not_found');
    const given = /^bearer\s+(\S+)$/i.exec(req.headers.get('authorization') ?? '')?.[1];
    if (!given || !sameSecret(given, token))
      return errorAnswer(path, 'unauthorized', '', { 'www-authenticate': 'Bearer' });
    const registry = services.metrics.registry;
    return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } });
  };
}
