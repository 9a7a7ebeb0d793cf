import type { FormResult } from '@convo/pages';
import { ERRORS } from '@convo/router';
import { type BodyLimits, decodeUtf8, formFields, HttpError, mediaType, readBody } from './body.ts';

/**
 * A form posted to an account's site, read through the same body reader as every route: its
 * fields, or the refusal as the error table says, in words for a person.
 */
export async function readSiteForm(req: Request, limits: BodyLimits): Promise<FormResult> {
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    return { ok: false, status: 415, message: 'Send the form as application/x-www-form-urlencoded.' };
  }
  try {
    const text = decodeUtf8(await readBody(req, limits));
    const fields = formFields(text);
    // URLSearchParams turns percent-encoded bytes that are not UTF-8 into U+FFFD: refuse them as
    // the raw body's own invalid bytes are, unless the replacement character was really sent.
    const replaced = [...fields.values()].some((values) => values.some((v) => v.includes('\uFFFD')));
    if (replaced && !text.includes('\uFFFD') && !/%EF%BF%BD/i.test(text)) {
      return { ok: false, status: 400, message: 'The form is not valid UTF-8 text.' };
    }
    return { ok: true, fields };
  } catch (e) {
    if (!(e instanceof HttpError) || e.code === 'client_closed') throw e;
    const status = ERRORS[e.code].status;
    const message = e.message || ERRORS[e.code].message || 'The form could not be read.';
    if (status === 400 || status === 408 || status === 413) return { ok: false, status, message };
    return { ok: false, status: 400, message };
  }
}
