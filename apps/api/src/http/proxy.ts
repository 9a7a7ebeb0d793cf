import ipaddr from 'ipaddr.js';
import type { Peer } from './peer.ts';

/** What an address written by a proxy looks like (IPv4, IPv6); anything else is not believed. */
const IP_ADDRESS = /^[\da-f.:]{2,45}$/i;
const FORWARDED_HOST = /^[a-z0-9.-]{1,253}(:\d{1,5})?$/i;

/** What these answers read of a request: its headers (a Request's, or a server's own reading of them). */
export interface RequestHead {
  readonly headers: { get(name: string): string | null };
}

/** What the request says of the client through the proxies the operator trusts (`TRUST_PROXY`). */
export interface TrustedProxies {
  /** The first hop's host and scheme as a trusted proxy forwarded them, or null. */
  forwarded(req: RequestHead): { host: string; proto: 'http' | 'https' } | null;
  /** Where absolute links point: `PUBLIC_URL`, or a proxy the operator trusts; never the raw Host. */
  origin(req: RequestHead): string | null;
  /**
   * The client's address: the socket's, or behind `hops` proxies the X-Forwarded-For entry that
   * many from the right, the one the outermost proxy appended. Entries left of it are whatever the
   * client sent (nginx's $proxy_add_x_forwarded_for keeps them), so they never count.
   */
  clientIp(req: RequestHead, peer: Peer | undefined): string;
}

export function trustedProxies(settings: { hops: number; publicUrl: string | undefined }): TrustedProxies {
  const { hops } = settings;
  const publicUrl = settings.publicUrl?.replace(/\/+$/, '');
  function forwarded(req: RequestHead) {
    if (!hops) return null;
    const host = req.headers.get('x-forwarded-host')?.split(',')[0]?.trim();
    const proto = req.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
    if (!host || !FORWARDED_HOST.test(host) || (proto !== 'http' && proto !== 'https')) return null;
    return { host, proto } as const;
  }
  return {
    forwarded,
    origin(req) {
      if (publicUrl) return publicUrl;
      const via = forwarded(req);
      return via ? `${via.proto}://${via.host}` : null;
    },
    clientIp(req, peer) {
      if (hops > 0) {
        const entries = (req.headers.get('x-forwarded-for') ?? '').split(',').map((e) => e.trim());
        const appended = entries[Math.max(0, entries.length - hops)];
        if (appended && IP_ADDRESS.test(appended)) return appended;
      }
      return peer?.clientIp ?? 'unknown';
    },
  };
}

/** How many leading bits of an IPv6 address name one client (a home or a host gets a /64). */
export const DEFAULT_IPV6_PREFIX = 64;

/**
 * A client as the per-address limits count it: an IPv4 address as it is (also one written as
 * IPv6, `::ffff:a.b.c.d`); an IPv6 address by its first `v6Prefix` bits, its network (one
 * client owns a whole /64, 2^64 addresses); anything else as it was given.
 */
export function clientKey(address: string, v6Prefix = DEFAULT_IPV6_PREFIX): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  if (v6Prefix >= 128) return parsed.toNormalizedString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${v6Prefix}`).toString()}/${v6Prefix}`;
}
