import { createHash } from 'node:crypto';

/**
 * SHA-256 of an API token, hex: what api_token.token_hash stores. Synchronous node:crypto (also in
 * Deno): Web Crypto's async digest cost the server 6% of its CPU on every request.
 */
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
