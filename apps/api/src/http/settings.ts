import { DEFAULT_SITE_LIMITS, type SiteLimits } from '@convo/pages';
import type { MailReceiving } from '../mail/receive.ts';
import type { BodyLimits } from './body.ts';
import type { DemoMailbox } from './demo-mail.ts';
import { DEFAULT_IPV6_PREFIX } from './proxy.ts';

/*
 * What the HTTP surface is told by the one typed config (start/config.ts reads the environment
 * into these): named pieces, each handed whole to the code that uses it, so a setting has one name
 * from its variable to its use. Their defaults live here; the config's variables default to them.
 */

/** The proxies the operator runs in front (`TRUST_PROXY`, `PUBLIC_URL`, `CLIENT_IPV6_PREFIX`). */
export interface ProxySettings {
  /** How many proxies stand in front; 0: X-Forwarded-* are ignored. */
  hops: number;
  /** The origin absolute links are built on; unset, links are relative (or a trusted proxy's). */
  publicUrl: string | undefined;
  /** How many leading bits of an IPv6 address the per-address limits count as one client. */
  ipv6Prefix: number;
}

export interface HttpSettings {
  /** Every body the server reads (`MAX_BODY_BYTES`, `BODY_TIMEOUT_MS`). */
  body: BodyLimits;
  /** A request not answered by then gets 503 `timeout` (`REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs: number;
  /** The most calls one tRPC batch may carry (`TRPC_MAX_BATCH`). */
  maxBatch: number;
  proxies: ProxySettings;
  /** The bearer token /metrics asks for (`METRICS_TOKEN`); unset, /metrics is not served. */
  metricsToken: string | undefined;
}

/** The account sites (`FORM_LIMIT_PER_IP` … `PAGE_LIMIT_PER_IP`, `SITE_FILES_MB`). */
export interface SiteSettings {
  limits: SiteLimits;
  /** What robots.txt and the sitemaps kept by change mark may take, in bytes. */
  filesBytes: number;
  /** The front proxy's internal location that sends recordings (`MEDIA_ACCEL_REDIRECT`); null: the server sends them. */
  recordingsHandOff: string | null;
}

/** Reply by e-mail's HTTP receiver (`INBOUND_MAIL_DOMAIN`, `INBOUND_MAIL_SECRET`, `INBOUND_MAIL_MAX_BYTES`, the limits). */
export interface InboundSettings extends MailReceiving {
  /** What `POST /inbound/mail` asks for as its bearer token; unset, the endpoint is not served. */
  secret: string | undefined;
  /** The largest mail taken in. */
  maxBytes: number;
}

export interface AppSettings {
  http: HttpSettings;
  site: SiteSettings;
  /** Reply by e-mail; unset, no mail is taken in. */
  inbound?: InboundSettings | undefined;
  /** `npm run demo` only: its unsent mail, listed at `/_demo/mail`. */
  demoMail?: DemoMailbox | undefined;
}

export const DEFAULT_HTTP: HttpSettings = {
  body: { maxBytes: 64 * 1024, timeoutMs: 5_000 },
  requestTimeoutMs: 10_000,
  maxBatch: 10,
  proxies: { hops: 0, publicUrl: undefined, ipv6Prefix: DEFAULT_IPV6_PREFIX },
  metricsToken: undefined,
};

export const DEFAULT_SITE: SiteSettings = {
  limits: DEFAULT_SITE_LIMITS,
  filesBytes: 32 * 1024 * 1024,
  recordingsHandOff: null,
};

/** What a caller changes of the defaults (tests, a second app): each piece by its own name. */
export interface SettingChanges {
  http?: Partial<Omit<HttpSettings, 'body' | 'proxies'>> & {
    body?: Partial<BodyLimits>;
    proxies?: Partial<ProxySettings>;
  };
  site?: { limits?: Partial<SiteLimits>; filesBytes?: number; recordingsHandOff?: string | null };
  demoMail?: DemoMailbox;
  inbound?: InboundSettings;
}

/** The settings `changes` makes of `base` (the defaults unless given). */
export function withChanges(
  changes: SettingChanges = {},
  base: AppSettings = { http: DEFAULT_HTTP, site: DEFAULT_SITE },
) {
  const { http = {}, site = {} } = changes;
  return {
    http: {
      ...base.http,
      ...http,
      body: { ...base.http.body, ...http.body },
      proxies: { ...base.http.proxies, ...http.proxies },
    },
    site: { ...base.site, ...site, limits: { ...base.site.limits, ...site.limits } },
    demoMail: changes.demoMail ?? base.demoMail,
    inbound: changes.inbound ?? base.inbound,
  } satisfies AppSettings;
}
