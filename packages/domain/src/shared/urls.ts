/** What the URL builders need to know about an account. */
export interface AccountAddress {
  /** The account's own origin, e.g. `https://acme.example.com` (no trailing slash). */
  host: string;
  /** The account's short key. */
  key: string;
}

export const conversationUrl = (a: AccountAddress, slug: string): string => `${a.host}/c/${slug}`;

export const conversationEmbedUrl = (a: AccountAddress, slug: string): string =>
  `${a.host}/embeds/conversations/${a.key}/${slug}`;

export const messageUrl = (conversationUrl: string, messageId: number): string =>
  `${conversationUrl}#message-${messageId}`;

/** A thread's own page (by its first message), under its conversation's address (or its path, `/c/<slug>`). */
export const threadUrl = (conversationUrl: string, rootId: number): string => `${conversationUrl}/m/${rootId}`;

/** Where a message is read: its anchor on its conversation's page, or, a thread reply, on its thread's page. */
export const messageReadUrl = (conversationUrl: string, m: { id: number; parentId: number | null }): string =>
  m.parentId === null ? messageUrl(conversationUrl, m.id) : `${threadUrl(conversationUrl, m.parentId)}#message-${m.id}`;

export const embedMessageUrl = (a: AccountAddress, messageId: number): string =>
  `${a.host}/embeds/messages/${a.key}/${messageId}&show_author=true`;

/** `download_media_url` of a recording this server keeps: stable, on the account's own host. */
export const mediaUrl = (a: AccountAddress, messageId: number): string => `${a.host}/media/${a.key}/${messageId}`;

/** Normalises an operator-given host to an origin: scheme and host, no path, no trailing slash. */
export function normaliseHost(host: string): string | null {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `https://${host}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) return null;
  return url.origin;
}

/**
 * The account origins a request for `authority` (its Host: hostname and port) can be addressed to.
 * An account's host is an origin, and the port a Host header leaves out depends on the scheme, so
 * without a scheme the request could be for either; a proxy that terminates TLS says which
 * (X-Forwarded-Proto), and then only that one counts. An authority that is no host gives none.
 */
export function originsForAuthority(authority: string, scheme?: 'http' | 'https'): string[] {
  if (authority.length === 0 || authority.length > 260 || /[\s/?#@\\]/.test(authority)) return [];
  const origins: string[] = [];
  for (const s of scheme ? [scheme] : (['http', 'https'] as const)) {
    try {
      const origin = new URL(`${s}://${authority}`).origin;
      if (!origins.includes(origin)) origins.push(origin);
    } catch {
      // not a host: no origin
    }
  }
  return origins;
}
