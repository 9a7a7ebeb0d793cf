import { databaseUnavailable } from '@convo/db';
import { newMediaKey, originsForAuthority } from '@convo/domain';
import { beaconAt, createSite, KeptFiles, loggedPath, PLAYED_ROUTE, type SiteVisit } from '@convo/pages';
import { ERRORS, errorBody, operations } from '@convo/router';
import { Hono, type Context as HonoContext } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { timeout } from 'hono/timeout';
import pkg from '../../package.json' with { type: 'json' };
import type { LiveHub } from '../live/hub.ts';
import { DiskMediaStore, type FileRead } from '../media/disk-store.ts';
import { type ApiEnv, errorAnswer, finishHeaders, json, TRPC_PREFIX } from './answers.ts';
import { HttpError, mediaType } from './body.ts';
import { serveDocs } from './docs.ts';
import { faviconResponse } from './favicon.ts';
import { inboundMailEndpoint } from './inbound-mail.ts';
import { metricsEndpoint } from './metrics-endpoint.ts';
import type { Peer } from './peer.ts';
import { clientKey, type RequestHead, trustedProxies } from './proxy.ts';
import { mountRest, REST_PREFIX } from './rest/handler.ts';
import type { Services } from './services.ts';
import type { AppSettings } from './settings.ts';
import { readSiteForm } from './site-form.ts';
import { trpcEndpoint } from './trpc-endpoint.ts';

export type { Peer } from './peer.ts';

export interface App {
  fetch(req: Request, peer?: Peer): Promise<Response>;
  /** From now on every response asks the client to close its connection (the server is stopping). */
  drain(): void;
  /** Writes what waits to be written (the beacons' plays): after the last request, before the pool closes. */
  settle(): Promise<void>;
  /**
   * A server that writes to the connection itself takes a live stream's answer off its body
   * (see LiveHub.attach).
   */
  attachLive: LiveHub['attach'];
  /**
   * A server that writes to the connection itself takes a recording's answer off its body and
   * sends the file (see DiskMediaStore.take); null when the body is not an unread file's.
   */
  takeFile(body: ReadableStream<Uint8Array>): FileRead | null;
  /**
   * A played beacon at its players' own address (`path`, with its query: beaconAt in @convo/pages)
   * and with no body, for a server that reads requests itself and takes beacons before the web
   * stack: the headers of its 204 when it was kept; null when the full stack is to answer it (a
   * refusal, with the page that says why; a host that is no account's; a failure).
   */
  takeBeacon(path: string, head: RequestHead, peer: Peer): Promise<Record<string, string> | null>;
}

/**
 * A client's own request id is kept when it is one token of up to 128 word characters, dots,
 * colons or dashes (tracing systems' ids carry dots and colons, which Hono's requestId refuses).
 */
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A request's id: the client's own, when it is one we keep; else a new one. */
function requestId(req: RequestHead): string {
  const incoming = req.headers.get('x-request-id');
  return incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/** Thrown by the timeout middleware; answered as a timeout in the request's own kind (app.onError). */
const LATE = 'request timeout';

/**
 * The whole HTTP surface as one Hono app, the same on Node and on Deno: tRPC under /trpc, the
 * fixed endpoints, the docs and REST under /api/v1, and anything else an account's own site by
 * its host (@convo/pages, a Hono app of its own). Middleware gives every request its id, its
 * timeout, its headers on the way out, its metric and its log line.
 */
export function createApp(services: Services, settings: AppSettings): App {
  const { http, site: siteSettings } = settings;
  const bodyLimits = http.body;
  const proxies = trustedProxies(http.proxies);
  const trpc = trpcEndpoint(services, { maxBatch: http.maxBatch, body: bodyLimits });
  const site = createSite({
    site: services.site,
    people: services.people,
    replies: services.replies,
    intake: services.intake,
    intakePageAdmin: services.intakePageAdmin,
    workflows: services.workflows,
    messageTemplates: services.messageTemplates,
    members: services.members,
    conversations: services.conversations,
    updateConversationStore: services.updateConversationStore,
    teamStore: services.teamStore,
    mediaReferences: services.mediaReferences,
    notifications: services.notifications,
    secrets: services.secrets,
    inbox: services.inbox,
    moderation: services.moderation,
    plays: services.plays,
    playBuffer: services.playBuffer,
    reactions: services.reactions,
    transcripts: services.transcripts,
    transcribing: services.transcribing,
    outbox: services.outbox,
    limits: services.visitorLimits,
    readLimits: services.readLimits,
    files: new KeptFiles(siteSettings.filesBytes),
    readForm: (req, upload) =>
      readSiteForm(
        req,
        bodyLimits,
        upload && {
          store: services.media.store,
          maxBytes: services.media.limits.maxBytes,
          newKey: () => newMediaKey(upload.accountId),
          field: upload.field,
          admit: upload.admit,
        },
      ),
    media: services.media,
    recordingsHandOff: siteSettings.recordingsHandOff,
    // An upload's bytes that stop coming for the body timeout are let go, like a form's.
    uploads: {
      handle: (req, visitor, admit) => services.uploads.handle(req, visitor, admit, bodyLimits.timeoutMs),
      take: (id, visitor, conversationId) => services.uploads.take(id, visitor, conversationId),
    },
    live: services.live,
    authenticate: services.authenticate,
    rates: siteSettings.limits,
    isUnavailable: services.isUnavailable,
    onError: (err) => services.logger.error({ err }, 'page failed'),
  });
  let openApi: Promise<string> | undefined;
  let draining = false;

  const api = new Hono<ApiEnv>({ strict: false });

  /** A request's id and state, as every request gets them first; when it started. */
  const begin = (c: HonoContext<ApiEnv>) => {
    const started = performance.now();
    c.set('request', { id: requestId(c.req.raw), auth: {} });
    c.set('url', new URL(c.req.raw.url));
    return started;
  };

  /** A request's answer on its way out: its headers and metric, and its log line when `logged`. */
  const finish = (c: HonoContext<ApiEnv>, started: number, logged: boolean) => {
    const req = c.req.raw;
    const res = c.res;
    const request = c.get('request');
    finishHeaders(req, res, request, draining);
    // A recording refused while it was arriving (its form's token, a limit): the rest of its
    // body is still on the connection, which cannot be trusted with another request.
    if (res.status >= 400 && carriesRecording(req)) res.headers.set('connection', 'close');
    // A client that went away gets no answer, and is no fault of ours: 499, as nginx counts it.
    const status = req.signal.aborted ? ERRORS.client_closed.status : res.status;
    const seconds = (performance.now() - started) / 1000;
    services.metrics.observe(request.label ?? 'other', req.method, status, seconds);
    if (!logged) return;
    services.logger.info(
      {
        requestId: request.id,
        method: req.method,
        path: loggedPath(c.get('url').pathname),
        status,
        ms: Math.round(seconds * 1000),
        accountId: request.auth.accountId,
      },
      'request',
    );
  };

  // The played beacon comes as often as pages are viewed, and is an account site's: it is sent
  // there before the middleware below, and counted in /metrics without a log line of its own
  // (routes/plays.ts in @convo/pages).
  api.post(PLAYED_ROUTE, async (c) => {
    const started = begin(c);
    c.res = await toSite(c);
    finish(c, started, false);
    return c.res;
  });

  // Every request: its id and state, then (on the way out) its headers, metric and log line.
  api.use(async (c, next) => {
    const started = begin(c);
    await next();
    finish(c, started, true);
  });

  const late = timeout(http.requestTimeoutMs, () => new HTTPException(503, { message: LATE }));
  api.use((c, next) => {
    const req = c.req.raw;
    return carriesRecording(req) || (onSite(c.get('url').pathname) && isFormPost(req)) ? next() : late(c, next);
  });

  api.all(`${TRPC_PREFIX}:calls{.+}`, (c) => trpc(c.req.raw, c.get('url'), c.get('request')));

  if (settings.demoMail) {
    const mailbox = settings.demoMail;
    api.get('/_demo/mail', (c) => {
      c.get('request').label = 'demo_mail';
      const client = proxies.clientIp(c.req.raw, c.env.peer);
      return mailbox.page(client === '127.0.0.1' || client === '::1' || client === '::ffff:127.0.0.1');
    });
  }

  /** An endpoint beside the operations, with its /metrics label: GET (and so HEAD) only. */
  const endpoint = (path: string, label: string, answer: (c: HonoContext<ApiEnv>) => Response | Promise<Response>) => {
    api.get(path, (c) => {
      c.get('request').label = label;
      return answer(c);
    });
    api.all(path, (c) => {
      c.get('request').label = label;
      return errorAnswer(c.get('url').pathname, 'method_not_allowed', '', { allow: 'GET, HEAD' });
    });
  };
  // Built on the first ask: its generator (trpc-to-openapi) is memory a server that is never
  // asked for the document need not hold.
  endpoint(`${REST_PREFIX}/openapi.json`, 'openapi', async () => {
    openApi ??= import('./openapi.ts').then((m) => JSON.stringify(m.buildOpenApiDocument(operations, pkg.version)));
    return new Response(await openApi, { headers: { 'content-type': 'application/json' } });
  });
  endpoint('/healthz', 'healthz', () => json(200, { status: 'ok' }));
  endpoint('/favicon.ico', 'favicon', faviconResponse);
  endpoint('/readyz', 'readyz', async () => {
    const problem = await services.notReady();
    return problem ? json(503, errorBody('not_ready', problem)) : json(200, { status: 'ready' });
  });
  const metrics = metricsEndpoint(services, http.metricsToken);
  endpoint('/metrics', 'metrics', (c) => metrics(c.req.raw, '/metrics'));
  const docs = async (c: HonoContext<ApiEnv>) =>
    (await serveDocs(REST_PREFIX, c.get('url').pathname)) ?? errorAnswer(c.get('url').pathname, 'route_not_found');
  endpoint(`${REST_PREFIX}/docs`, 'docs', docs);
  endpoint(`${REST_PREFIX}/docs/*`, 'docs', docs);

  mountRest(api, operations, services, { body: bodyLimits, origin: proxies.origin });

  /**
   * The account whose own host the request came to, if any: by its Host (url.host), or by what a
   * trusted proxy forwarded. Without a scheme from the proxy, either scheme's origin matches.
   */
  function siteAccount(req: RequestHead, host: string) {
    const via = proxies.forwarded(req);
    const origins = via ? originsForAuthority(via.host, via.proto) : originsForAuthority(host);
    return services.site.accountByHost(origins);
  }

  if (settings.inbound) {
    const inbound = inboundMailEndpoint(services, settings.inbound);
    api.post('/inbound/mail', (c) => {
      c.get('request').label = 'inbound_mail';
      return inbound(c.req.raw, c.get('url'));
    });
  }

  // Anything else is an account's own site when the request came to its host. When the database
  // cannot say, a person may be looking at a page: the HTML retry page, not JSON.
  api.all('*', toSite);

  /** A site's client, as its per-address limits count it. */
  const siteClient = (req: RequestHead, peer: Peer | undefined) =>
    clientKey(proxies.clientIp(req, peer), http.proxies.ipv6Prefix);

  /** A request to an account's own site: its account by host, then the site's answer. */
  async function toSite(c: HonoContext<ApiEnv>): Promise<Response> {
    const req = c.req.raw;
    const request = c.get('request');
    const account = await siteAccount(req, c.get('url').host).catch((err: unknown) => {
      if (services.isUnavailable(err)) return 'unavailable' as const;
      throw err;
    });
    if (account === 'unavailable') {
      request.label = 'site:unavailable';
      return site.unavailable(req);
    }
    if (!account) return errorAnswer(c.get('url').pathname, 'route_not_found');
    request.auth.accountId = account.id;
    const visit: SiteVisit = { clientIp: siteClient(req, c.env.peer) };
    try {
      return await site.fetch(req, account, visit);
    } finally {
      request.label = visit.label ?? 'site:other';
    }
  }

  /** A failure no route answered, as the error table says: never a stack trace. */
  api.onError((err, c) => {
    const req = c.req.raw;
    const path = c.get('url').pathname;
    if (err instanceof HTTPException && err.message === LATE) {
      return onSite(path) ? site.unavailable(req) : errorAnswer(path, 'timeout');
    }
    if (err instanceof HttpError) return errorAnswer(path, err.code, err.message);
    if (req.signal.aborted) return errorAnswer(path, 'client_closed');
    if (databaseUnavailable(err)) return errorAnswer(path, 'unavailable');
    services.logger.error({ err, requestId: c.get('request').id }, 'unhandled error');
    return errorAnswer(path, 'internal');
  });

  return {
    attachLive: (body, open) => services.live.attach(body, open),
    takeFile: (body) => (services.media.store instanceof DiskMediaStore ? services.media.store.take(body) : null),
    drain() {
      draining = true;
      // Each live stream is told to come back in a moment, to a replica that is not stopping.
      services.live.drain();
    },
    settle: () => services.playBuffer.flush(),
    async takeBeacon(path, head, peer) {
      const at = beaconAt(path);
      const host = head.headers.get('host');
      if (!at || !host) return null;
      const started = performance.now();
      try {
        const account = await siteAccount(head, host);
        if (!account) return null;
        const refusal = await site.takePlay(account, {
          ...at,
          cookie: head.headers.get('cookie') ?? undefined,
          fetchSite: head.headers.get('sec-fetch-site') ?? undefined,
          origin: head.headers.get('origin') ?? undefined,
          clientIp: siteClient(head, peer),
        });
        if (refusal) return null;
      } catch {
        // The full stack meets the same failure, and answers it as the error table says.
        return null;
      }
      services.metrics.observe(`site:${PLAYED_ROUTE}`, 'POST', 204, (performance.now() - started) / 1000);
      return {
        'cache-control': 'no-store',
        'x-request-id': requestId(head),
        ...(draining ? { connection: 'close' } : {}),
      };
    },
    fetch: async (req, peer) => api.fetch(req, { peer }),
  };
}

/** Pages and forms of the accounts' sites: everything but the API's two prefixes. */
const onSite = (path: string) => !path.startsWith(REST_PREFIX) && !path.startsWith(TRPC_PREFIX);

/**
 * A request that may carry a recording: a multipart POST (only the reply form takes one), or a
 * tus PATCH of an upload's bytes.
 */
/** A form a page posts (a reply, an intake start: either may name a finished upload). */
const isFormPost = (req: Request) => req.method === 'POST' && mediaType(req) === 'application/x-www-form-urlencoded';

const carriesRecording = (req: Request) =>
  (req.method === 'POST' && mediaType(req) === 'multipart/form-data') ||
  (req.method === 'PATCH' && mediaType(req) === 'application/offset+octet-stream');
