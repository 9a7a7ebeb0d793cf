import { databaseUnavailable } from '@convo/db';
import { newMediaKey, originsForAuthority } from '@convo/domain';
import { createSite, DEFAULT_SITE_LIMITS, KeptFiles, loggedPath, type SiteLimits, type SiteVisit } from '@convo/pages';
import { ERRORS, errorBody, operations, type RequestState } from '@convo/router';
import pkg from '../../package.json' with { type: 'json' };
import type { LiveHub } from '../live/hub.ts';
import { errorAnswer, finishHeaders, json, TRPC_PREFIX, withTimeout } from './answers.ts';
import { HttpError, mediaType } from './body.ts';
import type { DemoMailbox } from './demo-mail.ts';
import { serveDocs } from './docs.ts';
import { faviconResponse } from './favicon.ts';
import { metricsEndpoint } from './metrics-endpoint.ts';
import { buildOpenApiDocument } from './openapi.ts';
import type { Peer } from './peer.ts';
import { clientKey, trustedProxies } from './proxy.ts';
import { createRestHandler, REST_PREFIX } from './rest/handler.ts';
import type { Services } from './services.ts';
import { readSiteForm } from './site-form.ts';
import { trpcEndpoint } from './trpc-endpoint.ts';

export type { Peer } from './peer.ts';

export interface AppOptions {
  maxBodyBytes: number;
  /** A request not answered by then gets 503 `timeout` (default 10 s). */
  requestTimeoutMs?: number;
  /** A body must have arrived this long after reading began, or the answer is 408 (default 5 s). */
  bodyTimeoutMs?: number;
  /** The most calls one tRPC batch may carry (default 10). */
  maxBatch?: number;
  /** The origin absolute links are built on (`PUBLIC_URL`); unset, links are relative. */
  publicUrl?: string | undefined;
  /**
   * How many proxies the operator runs in front (`TRUST_PROXY`): with any, X-Forwarded-Host and
   * -Proto are believed, and the client's address is the X-Forwarded-For entry the outermost of
   * them appended. 0 (the default): the headers are ignored.
   */
  proxyHops?: number;
  /** How many leading bits of an IPv6 address the per-address limits count as one client (`CLIENT_IPV6_PREFIX`, 64). */
  ipv6Prefix?: number;
  /** The bearer token /metrics asks for (`METRICS_TOKEN`); unset, /metrics is not served. */
  metricsToken?: string | undefined;
  /** Rate limits of the sites' forms and page reads (`FORM_LIMIT_PER_IP`, `FORM_LIMIT_PER_EMAIL`, `PAGE_LIMIT_PER_IP`). */
  formLimits?: Partial<SiteLimits>;
  /** What robots.txt and the sitemaps kept by change mark may take (`SITE_FILES_MB`; default 32 MiB). */
  siteFilesBytes?: number;
  /** `npm run demo` only: its unsent mail, listed at `/_demo/mail`. */
  demoMail?: DemoMailbox | undefined;
}

export interface App {
  fetch(req: Request, peer?: Peer): Promise<Response>;
  /** From now on every response asks the client to close its connection (the server is stopping). */
  drain(): void;
  /**
   * A server that writes to the connection itself takes a live stream's answer off its body
   * (see LiveHub.attach).
   */
  attachLive: LiveHub['attach'];
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** An endpoint beside the operations, with its /metrics label: each answers GET (and so HEAD) only. */
interface Endpoint {
  label: string;
  answer(req: Request, path: string): Promise<Response> | Response;
}

/**
 * The whole HTTP surface as one fetch-standard handler, the same on Node and on Deno: a
 * composition of the parts in http/, rest/, trpc-endpoint.ts, metrics-endpoint.ts and the
 * account sites (@convo/pages), dispatched by path, then by host.
 */
export function createApp(services: Services, options: AppOptions): App {
  const timeoutMs = options.requestTimeoutMs ?? 10_000;
  const bodyLimits = { maxBytes: options.maxBodyBytes, timeoutMs: options.bodyTimeoutMs ?? 5_000 };
  const proxies = trustedProxies(options.proxyHops ?? 0, options.publicUrl?.replace(/\/+$/, ''));
  const rest = createRestHandler(operations, services, { body: bodyLimits, origin: proxies.origin });
  const trpc = trpcEndpoint(services, { maxBatch: options.maxBatch ?? 10, body: bodyLimits });
  const site = createSite({
    site: services.site,
    people: services.people,
    replies: services.replies,
    intake: services.intake,
    intakePageAdmin: services.intakePageAdmin,
    workflows: services.workflows,
    members: services.members,
    notifications: services.notifications,
    secrets: services.secrets,
    inbox: services.inbox,
    moderation: services.moderation,
    outbox: services.outbox,
    limits: services.visitorLimits,
    readLimits: services.readLimits,
    files: new KeptFiles(options.siteFilesBytes ?? 32 * 1024 * 1024),
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
    // An upload's bytes that stop coming for the body timeout are let go, like a form's.
    uploads: {
      handle: (req, visitor, admit) => services.uploads.handle(req, visitor, admit, bodyLimits.timeoutMs),
      take: (id, visitor, conversationId) => services.uploads.take(id, visitor, conversationId),
    },
    live: services.live,
    authenticate: services.authenticate,
    rates: { ...DEFAULT_SITE_LIMITS, ...options.formLimits },
    isUnavailable: services.isUnavailable,
    onError: (err) => services.logger.error({ err }, 'page failed'),
  });
  let openApi: string | undefined;
  let draining = false;

  const fixed = new Map<string, Endpoint>([
    [
      `${REST_PREFIX}/openapi.json`,
      {
        label: 'openapi',
        answer: () => {
          openApi ??= JSON.stringify(buildOpenApiDocument(operations, pkg.version));
          return new Response(openApi, { headers: { 'content-type': 'application/json' } });
        },
      },
    ],
    ['/healthz', { label: 'healthz', answer: () => json(200, { status: 'ok' }) }],
    ['/favicon.ico', { label: 'favicon', answer: faviconResponse }],
    [
      '/readyz',
      {
        label: 'readyz',
        answer: async () => {
          const problem = await services.notReady();
          return problem ? json(503, errorBody('not_ready', problem)) : json(200, { status: 'ready' });
        },
      },
    ],
    ['/metrics', { label: 'metrics', answer: metricsEndpoint(services, options.metricsToken) }],
  ]);

  /**
   * The account whose own host the request came to, if any: by its Host (url.host), or by what a
   * trusted proxy forwarded. Without a scheme from the proxy, either scheme's origin matches.
   */
  function siteAccount(req: Request, url: URL) {
    const via = proxies.forwarded(req);
    const origins = via ? originsForAuthority(via.host, via.proto) : originsForAuthority(url.host);
    return services.site.accountByHost(origins);
  }

  /** Dispatch by path (tRPC, the fixed endpoints, the docs, REST), then by host (an account's site). */
  async function route(req: Request, url: URL, request: RequestState, peer?: Peer): Promise<Response> {
    const path = url.pathname;
    if (path.startsWith(TRPC_PREFIX)) {
      return trpc(req, url, request);
    }
    if (path === '/_demo/mail' && options.demoMail && req.method === 'GET') {
      request.label = 'demo_mail';
      const client = proxies.clientIp(req, peer);
      return options.demoMail.page(client === '127.0.0.1' || client === '::1' || client === '::ffff:127.0.0.1');
    }
    const endpoint = fixed.get(path);
    const docs = path === `${REST_PREFIX}/docs` || path.startsWith(`${REST_PREFIX}/docs/`);
    if (endpoint || docs) {
      request.label = endpoint?.label ?? 'docs';
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return errorAnswer(path, 'method_not_allowed', '', { allow: 'GET, HEAD' });
      }
      if (endpoint) return endpoint.answer(req, path);
      return (await serveDocs(REST_PREFIX, path)) ?? errorAnswer(path, 'route_not_found');
    }
    if (path === REST_PREFIX || path.startsWith(`${REST_PREFIX}/`)) return rest(req, url, request);
    // Anything else is an account's own site when the request came to its host. When the database
    // cannot say, a person may be looking at a page: the HTML retry page, not JSON.
    const account = await siteAccount(req, url).catch((err: unknown) => {
      if (services.isUnavailable(err)) return 'unavailable' as const;
      throw err;
    });
    if (account === 'unavailable') {
      request.label = 'site:unavailable';
      return site.unavailable(req);
    }
    if (account) {
      request.forResponse.accountId = account.id;
      const visit: SiteVisit = { clientIp: clientKey(proxies.clientIp(req, peer), options.ipv6Prefix) };
      try {
        return await site.fetch(req, account, visit);
      } finally {
        request.label = visit.label ?? 'site:other';
      }
    }
    return errorAnswer(path, 'route_not_found');
  }

  /** A failure no route answered, as the error table says: never a stack trace. */
  function failureAnswer(req: Request, path: string, err: unknown, request: RequestState): Response {
    if (err instanceof HttpError) return errorAnswer(path, err.code, err.message);
    if (req.signal.aborted) return errorAnswer(path, 'client_closed');
    if (databaseUnavailable(err)) return errorAnswer(path, 'unavailable');
    services.logger.error({ err, requestId: request.id }, 'unhandled error');
    return errorAnswer(path, 'internal');
  }

  return {
    attachLive: (body, open) => services.live.attach(body, open),
    drain() {
      draining = true;
      // Each live stream is told to come back in a moment, to a replica that is not stopping.
      services.live.drain();
    },
    async fetch(req, peer) {
      const started = performance.now();
      const incoming = req.headers.get('x-request-id');
      const request: RequestState = {
        id: incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
        forResponse: {},
      };
      // Parsed once here; routing and the REST adapter share it.
      const url = new URL(req.url);
      const path = url.pathname;
      // A recording being sent takes as long as its bytes keep coming (the form reader stops one
      // that stalls), and a site's form that names a finished upload as long as its probe (which
      // has a bound of its own); everything else is answered within the request timeout, a
      // page's request with a page.
      const answering = route(req, url, request, peer);
      const onSite = !path.startsWith(REST_PREFIX) && !path.startsWith(TRPC_PREFIX);
      const res = await (carriesRecording(req) || (onSite && isFormPost(req))
        ? answering
        : withTimeout(answering, timeoutMs, () => (onSite ? site.unavailable(req) : errorAnswer(path, 'timeout')))
      ).catch((err: unknown) => failureAnswer(req, path, err, request));
      finishHeaders(req, res, request, draining);
      // A recording refused while it was arriving (its form's token, a limit): the rest of its
      // body is still on the connection, which cannot be trusted with another request.
      if (res.status >= 400 && carriesRecording(req)) res.headers.set('connection', 'close');
      // A client that went away gets no answer, and is no fault of ours: 499, as nginx counts it.
      const status = req.signal.aborted ? ERRORS.client_closed.status : res.status;
      const seconds = (performance.now() - started) / 1000;
      services.metrics.observe(request.label ?? 'other', req.method, status, seconds);
      services.logger.info(
        {
          requestId: request.id,
          method: req.method,
          path: loggedPath(path),
          status,
          ms: Math.round(seconds * 1000),
          accountId: request.forResponse.accountId,
        },
        'request',
      );
      if (req.method === 'HEAD' && res.body && !path.startsWith(TRPC_PREFIX)) {
        return new Response(null, { status: res.status, headers: res.headers });
      }
      return res;
    },
  };
}

/**
 * A request that may carry a recording: a multipart POST (only the reply form takes one), or a
 * tus PATCH of an upload's bytes.
 */
/** A form a page posts (a reply, an intake start: either may name a finished upload). */
const isFormPost = (req: Request) => req.method === 'POST' && mediaType(req) === 'application/x-www-form-urlencoded';

const carriesRecording = (req: Request) =>
  (req.method === 'POST' && mediaType(req) === 'multipart/form-data') ||
  (req.method === 'PATCH' && mediaType(req) === 'application/offset+octet-stream');
