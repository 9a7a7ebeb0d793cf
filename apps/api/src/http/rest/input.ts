import { z } from 'zod';
import { type BodyLimits, decodeUtf8, formFields, HttpError, mediaType, readBody } from '../body.ts';

/*
 * REST input as a procedure takes it. Query and form fields are strings; each is turned into what
 * its member of the procedure's input schema holds (read through zod's public classes), and the
 * procedure's own schema then judges it, so REST and tRPC refuse the same things.
 */

type FieldKind = 'boolean' | 'number' | 'list' | 'other';
export type FieldKinds = Map<string, FieldKind>;

/** What each member of an object schema holds, seen through optional, default and pipe wrappers. */
export function fieldKinds(schema: z.ZodObject): FieldKinds {
  const kinds: FieldKinds = new Map();
  for (const [key, member] of Object.entries(schema.shape)) {
    let s: z.core.$ZodType = member;
    for (;;) {
      if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) s = s.unwrap();
      else if (s instanceof z.ZodPipe) s = s.in;
      else break;
    }
    kinds.set(
      key,
      s instanceof z.ZodBoolean
        ? 'boolean'
        : s instanceof z.ZodNumber
          ? 'number'
          : s instanceof z.ZodArray
            ? 'list'
            : 'other',
    );
  }
  return kinds;
}

/** A whole number in plain decimal digits; `0x1`, `1e1`, `+1` and ` 1` are not (Number() would take them). */
const DECIMAL = /^-?\d{1,16}$/;

export function typed(value: string, kind: FieldKind | undefined): unknown {
  if (kind === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  if (kind === 'number' && DECIMAL.test(value)) return Number(value);
  return value;
}

/**
 * Fields into an input object (with no prototype: `?__proto__=` stays a field). A repeated field
 * becomes a list, which every schema but a list's refuses (422); a list's field is a list even
 * when it is given once. An empty query number (`?page=`) is omitted.
 */
function inputOf(fields: Iterable<[string, string[]]>, kinds: FieldKinds, emptyIsOmitted: boolean) {
  const input: Record<string, unknown> = Object.create(null);
  for (const [key, values] of fields) {
    const kind = kinds.get(key);
    const given = emptyIsOmitted && kind === 'number' ? values.filter((v) => v !== '') : values;
    if (given.length === 0) continue;
    input[key] =
      given.length === 1 && kind !== 'list' ? typed(given[0] as string, kind) : given.map((v) => typed(v, kind));
  }
  return input;
}

/** A form's fields (a multipart body's), as an input object. */
export const formInput = (fields: Map<string, string[]>, kinds: FieldKinds): Record<string, unknown> =>
  inputOf(fields, kinds, false);

export function queryInput(url: URL, kinds: FieldKinds): Record<string, unknown> {
  const fields = new Map<string, string[]>();
  for (const [key, value] of url.searchParams) {
    const values = fields.get(key);
    if (values) values.push(value);
    else fields.set(key, [value]);
  }
  return inputOf(fields, kinds, true);
}

/** A JSON object or array, whole: no form body can be one (its first field's name would start with `{`). */
function looksLikeJson(text: string): boolean {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A JSON or form body, read within the limits; no body at all is an empty object. */
export async function bodyInput(req: Request, limits: BodyLimits, kinds: FieldKinds): Promise<object> {
  const type = mediaType(req);
  const json = type === 'application/json' || type.endsWith('+json');
  const form = type === 'application/x-www-form-urlencoded';
  // Refused before reading: a body of a type no operation takes.
  if (!json && !form && type !== '') throw new HttpError('unsupported_media_type');
  const text = decodeUtf8(await readBody(req, limits));
  // No body at all is an empty request: every field of create_conversation is optional.
  if (text.trim() === '' && (type === '' || type === 'application/json' || form)) return {};
  if (json) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new HttpError('malformed_body');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new HttpError('invalid_input', 'the request body must be a JSON object');
    }
    return body;
  }
  // `curl -d '{"title":"x"}'` sends JSON labelled as a form, whose one field would be named by the
  // JSON text: refused, saying how to send it, never read as a request with no fields.
  if (form && looksLikeJson(text)) throw new HttpError('json_sent_as_form');
  if (form) return inputOf(formFields(text), kinds, false);
  throw new HttpError('unsupported_media_type');
}
