import type { ErrorCode } from '@convo/router';

/*
 * Every request body the server reads comes through here, on every route and runtime: bounded in
 * size while it streams (a declared Content-Length over the limit is refused before a byte is
 * read; an undeclared one is cut off at the limit) and in time (a body that stops arriving is a
 * 408, not a request held until the request timeout). A client that goes away while sending is
 * told apart from a fault of ours: it gets no answer and is counted as 499.
 */

/** A request refused before it reached an operation: its row of the error table and a detail. */
export class HttpError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, detail = '') {
    super(detail);
    this.code = code;
  }
}

export interface BodyLimits {
  maxBytes: number;
  /** The whole body must have arrived this long after reading began. */
  timeoutMs: number;
}

export const tooLarge = (limit: number) =>
  new HttpError('body_too_large', `the request body is limited to ${limit} bytes`);

/** The declared Content-Length, or null; a value that is not a length is a malformed request. */
function declaredLength(req: Request): number | null {
  const header = req.headers.get('content-length');
  if (header === null) return null;
  if (!/^\d{1,15}$/.test(header.trim())) throw new HttpError('bad_request');
  return Number(header);
}

/** Requests whose body was cut off at the limit with more of it still on its way. */
const cut = new WeakSet<Request>();

/** Whether `req`'s body was cut off at the limit: what is left of it is still on the connection. */
export const bodyWasCut = (req: Request): boolean => cut.has(req);

async function readAll(req: Request, limit: number, declared: number | null): Promise<Uint8Array> {
  // A declared length within the limit is read whole (the Node adapter's fast path); the runtime
  // never hands over more than the declared length.
  if (declared !== null) return new Uint8Array(await req.arrayBuffer());
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      cut.add(req);
      void reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/** The body's bytes, within the limits, or an HttpError saying why not. */
export async function readBody(req: Request, limits: BodyLimits): Promise<Uint8Array> {
  const declared = declaredLength(req);
  if (declared !== null && declared > limits.maxBytes) throw tooLarge(limits.maxBytes);
  if (declared === 0) return new Uint8Array(0);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HttpError('request_timeout')), limits.timeoutMs);
  });
  const reading = readAll(req, limits.maxBytes, declared);
  // The loser of the race must not become an unhandled rejection.
  reading.catch(() => undefined);
  try {
    return await Promise.race([reading, late]);
  } catch (e) {
    if (e instanceof HttpError) throw e;
    // The stream broke: the client reset or closed the connection while sending.
    throw new HttpError('client_closed');
  } finally {
    clearTimeout(timer);
  }
}

export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError('malformed_body');
  }
}

/** The media type of the body, lower case, without parameters. */
export const mediaType = (req: Request): string =>
  (req.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** Form fields beyond this are refused before they are parsed: no body costs more than a glance. */
export const MAX_FORM_FIELDS = 100;

/**
 * A form body's fields, each with every value it was given, in one pass over the fields
 * (collecting a field's values with getAll, field by field, was quadratic in their number).
 */
export function formFields(text: string): Map<string, string[]> {
  let separators = 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    if (++separators >= MAX_FORM_FIELDS) {
      throw new HttpError('body_too_large', `a form body is limited to ${MAX_FORM_FIELDS} fields`);
    }
  }
  const fields = new Map<string, string[]>();
  for (const [key, value] of new URLSearchParams(text)) {
    const values = fields.get(key);
    if (values) values.push(value);
    else fields.set(key, [value]);
  }
  return fields;
}
