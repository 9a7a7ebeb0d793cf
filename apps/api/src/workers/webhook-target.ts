import { type LookupAddress, type LookupOptions, lookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { WebhookTargets } from '@convo/domain';
import ipaddr from 'ipaddr.js';

/*
 * No server-side request forgery through webhooks: an endpoint must be an https URL (http only
 * with WEBHOOK_ALLOW_HTTP), and it must not resolve to a loopback, private, link-local (cloud
 * metadata lives at 169.254.169.254), or otherwise non-public address, unless
 * WEBHOOK_ALLOW_PRIVATE is on. The address is checked when an endpoint is subscribed and again
 * when each delivery connects (the check is the connection's own DNS lookup), so a name that
 * later resolves elsewhere cannot reach inside.
 */

export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export class TargetRefused extends Error {}

/**
 * Every range a webhook may not reach: the IANA IPv4 and IPv6 Special-Purpose Address Registries
 * (whatever their "globally reachable" column says: a relay or translator range can lead inside),
 * multicast, the deprecated IPv4-compatible (::/96) and site-local ranges, and IPv6 outside the
 * global unicast space 2000::/3. One table: subscription and delivery both check it.
 */
export const NON_PUBLIC_RANGES: readonly (readonly [cidr: string, what: string])[] = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private-use'],
  ['100.64.0.0/10', 'shared address space (CGN)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private-use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private-use'],
  ['192.175.48.0/24', 'direct delegation AS112 service'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['64:ff9b::/96', 'IPv4-IPv6 translation'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 translation (local)'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy prefix'],
  ['2001::/23', 'IETF protocol assignments (Teredo, ORCHID, …)'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing (SRv6) SIDs'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

const RANGES = NON_PUBLIC_RANGES.map(([cidr, what]) => ({ range: ipaddr.parseCIDR(cidr), what }));
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The non-public range an address falls in (its name), or null for an ordinary public address. */
export function nonPublicRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an address';
  const ip = ipaddr.parse(address);
  for (const { range, what } of RANGES) {
    if (range[0].kind() === ip.kind() && ip.match(range)) return what;
  }
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST_V6)) return 'outside IPv6 global unicast (2000::/3)';
  return null;
}

/** Only ordinary public unicast addresses are reachable: none of NON_PUBLIC_RANGES. */
export const isPublicAddress = (address: string): boolean => nonPublicRange(address) === null;

/** The URL, if its scheme and form are acceptable; the address is checked when it is looked up. */
export function targetUrl(value: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TargetRefused('the endpoint is not a URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new TargetRefused('the endpoint must be an https:// URL');
  }
  if (url.username || url.password) throw new TargetRefused('the endpoint must not carry credentials');
  if (value.length > 2048) throw new TargetRefused('the endpoint URL is longer than 2048 characters');
  return url;
}

/** A DNS lookup (the signature net.connect takes) that refuses non-public addresses. */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = policy.allowPrivate ? [] : addresses.filter((a) => !isPublicAddress(a.address));
      if (refused.length > 0 || addresses.length === 0) {
        const e: NodeJS.ErrnoException = new TargetRefused(
          `the endpoint resolves to a non-public address (${refused.map((a) => a.address).join(', ')})`,
        );
        e.code = 'WEBHOOK_TARGET_REFUSED';
        return callback(e, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

const LOOKUP_TIMEOUT_MS = 5_000;

/** Checks an endpoint before it is stored: its form, and where its name resolves now. */
export async function checkTarget(value: string, policy: TargetPolicy): Promise<URL> {
  const url = targetUrl(value, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    if (!policy.allowPrivate && !isPublicAddress(host)) {
      throw new TargetRefused(`the endpoint is a non-public address (${host})`);
    }
    return url;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      new Promise<void>((resolve, reject) =>
        guardedLookup(policy)(host, {}, (err) =>
          err
            ? reject(
                err instanceof TargetRefused
                  ? err
                  : new TargetRefused(`the endpoint's host does not resolve (${host})`),
              )
            : resolve(),
        ),
      ),
      // A subscription waits for DNS at most this long; a slow resolver is no way to hold a request.
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new TargetRefused(`the endpoint's host did not resolve in time (${host})`)),
          LOOKUP_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return url;
}

/** The domain's WebhookTargets port: this policy, checked as above. */
export function webhookTargets(policy: TargetPolicy): WebhookTargets {
  return {
    async check(value) {
      try {
        return { ok: true, url: (await checkTarget(value, policy)).href };
      } catch (e) {
        if (e instanceof TargetRefused) return { ok: false, reason: e.message };
        throw e;
      }
    },
  };
}
