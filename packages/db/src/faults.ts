/*
 * Which failures mean "the database is not there right now" rather than "this request is wrong":
 * refused or dropped connections, a server shutting down, an exhausted pool, a statement that ran
 * past its timeout, a deadlock. They answer 503 (retry shortly), never 500.
 */

const CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // PostgreSQL: connection exceptions, shutdown, too many connections, cancelled by timeout, deadlock.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
  '40P01',
  '40001',
]);

const MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connection error|connection ended|not queryable|closed the connection|the database system is (starting|shutting) down|terminating connection/i;

/** True when the error (or what it wraps) says the database could not serve the request just now. */
export function databaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CODES.has(code)) return true;
    if (MESSAGES.test(e.message)) return true;
    e = (e as { cause?: unknown; previous?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}
