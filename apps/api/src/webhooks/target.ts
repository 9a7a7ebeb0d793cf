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

/** Only ordinary public unicast addresses are reachable (ipaddr.js names every other range). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

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
