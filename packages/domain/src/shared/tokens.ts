/**
 * API tokens: 32 random bytes behind a recognisable prefix. Only a hash of a token is stored
 * (see hashToken in @convo/db); a token has 256 bits of entropy, so a fast hash is enough.
 */
export const TOKEN_PREFIX = 'cnv_';

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

/** 32 random bytes, base64url: the secret behind a session cookie, a sign-in link or a form. */
export function generateSecret(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return base64url(bytes);
}

export function generateToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return `${TOKEN_PREFIX}${base64url(bytes)}`;
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

/**
 * A webhook endpoint's signing secret, as Standard Webhooks writes one: `whsec_` and the base64
 * of 24 random bytes. Shown once, when the endpoint is subscribed; kept to sign its deliveries.
 */
export function generateWebhookSecret(): string {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}
