/**
 * API tokens: 32 random bytes behind a recognisable prefix. Only the SHA-256 of a token is
 * stored; a token has 256 bits of entropy, so a fast hash is enough (no password stretching).
 */
export const TOKEN_PREFIX = 'cnv_';

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

export function generateToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return `${TOKEN_PREFIX}${base64url(bytes)}`;
}

export async function hashToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  let hex = '';
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/** Accepts `Bearer <token>` or the raw token, as the original service does. */
export function tokenFromAuthorization(header: string | null | undefined): string | null {
  if (!header) return null;
  const value = header.trim();
  const match = /^bearer(?:\s+(.*))?$/i.exec(value);
  const token = (match ? (match[1] ?? '') : value).trim();
  if (token.length === 0 || token.length > 512 || /\s/.test(token)) return null;
  return token;
}
