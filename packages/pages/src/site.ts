import type { SiteAccount } from '@convo/domain';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { routePath } from 'hono/route';
import type { SiteDeps, SiteVisit } from './deps.ts';
import { embedHeaders, mediaHeaders, notFound, page, pageHeaders, refused, unavailablePage } from './frame.ts';
import { posting } from './posting.ts';
import type { SiteEnv } from './request.ts';
import { conversationRoutes } from './routes/conversation.ts';
import { embedRoutes } from './routes/embeds.ts';
import { eventRoutes } from './routes/events.ts';
import { homeRoutes } from './routes/home.ts';
import { intakeRoutes } from './routes/intake.ts';
import { mailRoutes } from './routes/mail.ts';
import { manageRoutes } from './routes/manage.ts';
import { mediaRoutes } from './routes/media.ts';
import { type Beacon, PLAYED_ROUTE, playBeacon, playRoutes, takePlay } from './routes/plays.ts';
import { reactionRoutes } from './routes/reactions.ts';
import { seoRoutes } from './routes/seo.ts';
import { signInRoutes } from './routes/sign-in.ts';
import { transcriptRoutes } from './routes/transcripts.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { readLimit, session } from './session.ts';
import * as errors from './views/not-found.ts';

export interface Site {
  /** Answers a request that came to `account`'s own host. */
  fetch(req: Request, account: SiteAccount, visit: SiteVisit): Promise<Response>;
  /** The retry page, for when the database cannot even say which account's host this is. */
  unavailable(req: Request): Promise<Response>;
  /**
   * A played beacon's checks and play (routes/plays.ts), for a server that takes beacons before
   * the web stack and hands what it does not keep to the route: null when it was kept (204), else
   * the refusal its route will answer (and count against the beacons' limit).
   */
  takePlay(account: SiteAccount, beacon: Beacon): ReturnType<typeof takePlay>;
}

/**
 * The account's own site: the middleware every request passes (the route's label, the headers,
 * 405s, the read limit, who is signed in), then the routes by area, mounted with `app.route`.
 */
export function createSite(deps: SiteDeps): Site {
  const app = new Hono<SiteEnv>();
  const kit = { deps, posting: posting(deps) };

  // The played beacon, before the middleware every other request passes (routes/plays.ts).
  app.post(PLAYED_ROUTE, playBeacon(kit));

  // What answered, for /metrics: the route's own pattern (bounded), never the path a client sent.
  app.use(async (c, next) => {
    await next();
    const route = routePath(c, -1);
    c.env.visit.label = route.includes('*') ? 'site:other' : `site:${route}`;
  });
  app.use(async (c, next) => {
    // A live stream is no document (nothing to frame, run or sniff), and its headers stay in
    // memory as long as it is open: it sets the few it needs itself, unless it is refused.
    if (c.req.path.endsWith('/events')) {
      await next();
      if (c.res.headers.get('content-type')?.startsWith('text/event-stream')) return;
      return pageHeaders(c, async () => {});
    }
    if (c.req.path.startsWith('/embeds/')) return embedHeaders(c, next);
    if (!c.req.path.startsWith('/media/')) return pageHeaders(c, next);
    // A recording gets a policy that allows nothing; the page a missing one answers is a page.
    await next();
    const page = c.res.headers.get('content-type')?.startsWith('text/html') === true;
    await (page ? pageHeaders : mediaHeaders)(c, async () => {});
  });
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, allowed) =>
        page(c, 405, errors.methodNotAllowed(allowed.join(', ')), 'Method not allowed', {
          headers: { allow: allowed.join(', ') },
        }),
    }),
  );
  app.use(readLimit(deps));
  // An address whose query holds a NUL (`?q=%00`) or bytes that are not UTF-8: no text of ours
  // may hold either, whichever route reads it (the inbox's search, a tag, a return path).
  app.use(async (c, next) => {
    const query = c.req.url.slice(c.req.url.indexOf('?') + 1 || c.req.url.length);
    if (query !== '' && !queryIsText(query)) {
      return refused(c, 400, 'This address holds a character no text here may hold.');
    }
    return next();
  });
  app.use(session(deps));

  const intake = intakeRoutes(kit);
  app.route('/', homeRoutes(kit, intake));
  app.route('/', intake.routes);
  app.route('/', manageRoutes(kit));
  app.route('/', conversationRoutes(kit));
  app.route('/', signInRoutes(kit));
  app.route('/', mailRoutes(kit));
  app.route('/', embedRoutes(kit));
  app.route('/', eventRoutes(kit));
  app.route('/', playRoutes(kit));
  app.route('/', reactionRoutes(kit));
  app.route('/', transcriptRoutes(kit));
  app.route('/', mediaRoutes(kit));
  app.route('/', uploadRoutes(kit));
  app.route('/', seoRoutes(kit));

  app.notFound(notFound);
  app.onError((err, c) => {
    if (err instanceof HTTPException && err.status === 403) {
      return refused(c, 403, 'This form was sent from another site.');
    }
    const form = c.req.method === 'POST';
    if (deps.isUnavailable(err)) {
      return page(c, 503, errors.unavailable({ form }), 'Unavailable', { headers: { 'retry-after': '1' } });
    }
    deps.onError(err);
    return page(c, 500, errors.unavailable({ form }), 'Unavailable');
  });

  return {
    fetch: async (req, account, visit) => app.fetch(req, { account, visit }),
    unavailable: unavailablePage,
    takePlay: (account, beacon) => takePlay(deps, account, beacon, true),
  };
}

/** The path as the request log keeps it: a sign-in link's token is a secret, never written down. */
export const loggedPath = (path: string): string => (path.startsWith('/sign-in/') ? '/sign-in/[token]' : path);

/** A query that decodes to UTF-8 text without a NUL. */
function queryIsText(query: string): boolean {
  for (const part of query.split(/[&=]/)) {
    try {
      if (decodeURIComponent(part.replaceAll('+', ' ')).includes('\u0000')) return false;
    } catch {
      return false;
    }
  }
  return true;
}
