import http from 'node:http';
import autocannon from 'autocannon';
import { cpuMeter, type Scenario } from '../load.ts';
import { DURATION, PAGE_HOST } from '../options.ts';
import { type Server, start, startOptions, stopServer } from '../servers.ts';

/**
 * Runs `section` beside the product again, keeping no page in memory (PAGE_CACHE_MB=0): every page
 * read from the database and built anew, as the first read after each change to an account is.
 * Started for the section alone, so that its timers and workers never run beside another's.
 */
export async function withUnkept<T>(section: (unkept: Server) => Promise<T>): Promise<T> {
  const unkept = await start('product, no page kept', 'apps/api/src/entry/node.ts', 3303, startOptions(), {
    PAGE_CACHE_MB: '0',
  });
  try {
    return await section(unkept);
  } finally {
    await stopServer(unkept);
  }
}

/** A page of the PAGE_HOST account's site (fetch may not set Host; node:http may), with its visitor cookie. */
export function getPage(server: Server, path: string): Promise<{ status: number; html: string; cookie: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.base}${path}`, { headers: { host: PAGE_HOST } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        const cookie = (res.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
        res.on('end', () => resolve({ status: res.statusCode ?? 0, html: body, cookie }));
      })
      .on('error', reject);
  });
}

/** create_conversation, the yardstick the form sections compare their posts with. */
export const CREATE: Scenario = {
  name: 'create',
  method: 'POST',
  path: () => '/api/v1/conversations/create_conversation',
  body: '{"title":"Bench create"}',
};

/**
 * A form of the PAGE_HOST account's site posted as fast as `connections` allow for DURATION, with
 * the cookie and fields its page gave (none: a POST without a body, a beacon's): posts/s, and
 * the answers that were not `ok` (the 303 of a post; a beacon's 204).
 */
export async function postForm(
  server: Server,
  path: string,
  form: { cookie: string; body?: string },
  connections: number,
  ok: '303' | '204' = '303',
): Promise<{ rps: number; bad: number; cpuMs: number; pgMs: number }> {
  const spent = cpuMeter(server);
  const result = await autocannon({
    url: server.base,
    connections,
    duration: DURATION,
    headers: {
      host: PAGE_HOST,
      cookie: form.cookie,
      origin: `https://${PAGE_HOST}`,
      ...(form.body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    requests: [{ method: 'POST', path, ...(form.body === undefined ? {} : { body: form.body }) }],
  });
  const redirected = result.statusCodeStats?.[ok]?.count ?? 0;
  const cpu = spent(result.requests.total);
  return {
    rps: result.requests.average,
    bad: result.errors + result.timeouts + result.requests.total - redirected,
    cpuMs: cpu.serverMs,
    pgMs: cpu.pgMs,
  };
}
