import { MediaUnavailable } from '@convo/domain';

/*
 * One rule for "the storage cannot keep or give bytes now" (a full disk, a read-only mount, the
 * object store down), whichever store said it: answered 503 with a retry, never as a bug.
 */

const UNAVAILABLE = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EACCES',
  'EPERM',
  'EIO',
  'EMFILE',
  'ENFILE',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

export function storageUnavailable(err: unknown): boolean {
  if (err instanceof MediaUnavailable) return true;
  if (!(err instanceof Error)) return false;
  const code = 'code' in err ? err.code : undefined;
  if (typeof code === 'string' && UNAVAILABLE.has(code)) return true;
  return err.cause !== undefined && err.cause !== err && storageUnavailable(err.cause);
}

/** The error as MediaUnavailable when it means the storage is unavailable; else as it was. */
export function unavailableOr(err: unknown): unknown {
  if (!storageUnavailable(err) || err instanceof MediaUnavailable) return err;
  const code = err instanceof Error && 'code' in err ? ` (${String(err.code)})` : '';
  return new MediaUnavailable(`the media store cannot keep bytes now${code}`);
}
