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

export const embedMessageUrl = (a: AccountAddress, messageId: number): string =>
  `${a.host}/embeds/messages/${a.key}/${messageId}&show_author=true`;

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
