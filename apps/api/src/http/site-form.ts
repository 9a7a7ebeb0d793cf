import { Readable } from 'node:stream';
import type { ReceivedFile } from '@convo/domain';
import { type MediaStore, MediaTooLarge, MediaUnavailable } from '@convo/domain';
import type { FormResult } from '@convo/pages';
import { ERRORS } from '@convo/router';
import busboy from 'busboy';
import { type BodyLimits, decodeUtf8, formFields, HttpError, MAX_FORM_FIELDS, mediaType, readBody } from './body.ts';

/**
 * A form posted to an account's site, read through the same body reader as every route: its
 * fields, or the refusal as the error table says, in words for a person. A form that may carry a
 * recording (`upload`) may also come as multipart/form-data: its one file streams into the media
 * store as it arrives (busboy), never whole in memory.
 */
export async function readSiteForm(req: Request, limits: BodyLimits, upload?: SiteUpload): Promise<FormResult> {
  const type = mediaType(req);
  if (upload && type === 'multipart/form-data') return readMultipart(req, limits, upload);
  if (type !== 'application/x-www-form-urlencoded') {
    return {
      ok: false,
      status: 415,
      message: upload
        ? 'Send the form as multipart/form-data or application/x-www-form-urlencoded.'
        : 'Send the form as application/x-www-form-urlencoded.',
    };
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
    if (holdsNul(fields)) return { ok: false, status: 400, message: NUL_REFUSED };
    return { ok: true, fields };
  } catch (e) {
    if (!(e instanceof HttpError) || e.code === 'client_closed') throw e;
    const status = ERRORS[e.code].status;
    const message = e.message || ERRORS[e.code].message || 'The form could not be read.';
    if (status === 400 || status === 408 || status === 413) return { ok: false, status, message };
    return { ok: false, status: 400, message };
  }
}

/** Where a form's recording goes: the store, the most it may hold, a new key for it, its field. */
export interface SiteUpload {
  store: MediaStore;
  maxBytes: number;
  newKey: () => string;
  field: string;
  /**
   * Asked with the fields that came before the file, before a byte of it is kept: false refuses
   * the form there (the caller knows why), so a form without its token never fills the disk.
   */
  admit?: ((fields: Map<string, string[]>) => Promise<boolean>) | undefined;
}

type Refusal = Extract<FormResult, { ok: false }>;

const refusal = (status: Refusal['status'], message: string): Refusal => ({ ok: false, status, message });

/**
 * A multipart form: its text fields (each within the body limit, at most MAX_FORM_FIELDS), and
 * at most one file in `upload.field`, kept under a new key. The body may take as long as it needs
 * while bytes keep coming; one that stalls for the body timeout is a 408. Whatever refuses the
 * form removes the file it had begun to keep.
 */
async function readMultipart(req: Request, limits: BodyLimits, upload: SiteUpload): Promise<FormResult> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  // The file, the fields and the multipart framing around them.
  const most = upload.maxBytes + limits.maxBytes;
  if (declared > most) {
    await req.body?.cancel().catch(() => undefined);
    return refusal(413, new MediaTooLarge(upload.maxBytes).message);
  }
  if (!req.body) return refusal(400, 'The form is empty.');
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': req.headers.get('content-type') ?? '' },
      defParamCharset: 'utf8',
      limits: {
        fieldSize: limits.maxBytes,
        fields: MAX_FORM_FIELDS,
        files: 1,
        parts: MAX_FORM_FIELDS + 1,
        // One byte past the limit reaches the store, which refuses it.
        fileSize: upload.maxBytes + 1,
      },
    });
  } catch {
    return refusal(400, 'The form could not be read (its multipart boundary is missing).');
  }
  const source = Readable.fromWeb(req.body);
  const fields = new Map<string, string[]>();
  let file: Promise<ReceivedFile | null> = Promise.resolve(null);
  let problem: Refusal | null = null;
  /** The file part being kept: ended with an error when the form is refused, so its store stops. */
  let receiving: Readable | null = null;
  const fail = (why: Refusal) => {
    problem ??= why;
    source.destroy();
    receiving?.destroy(new Error('the form was refused'));
  };

  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) return fail(refusal(413, `A form field is limited to ${limits.maxBytes} bytes.`));
    const values = fields.get(name);
    if (values) values.push(value);
    else fields.set(name, [value]);
  });
  parser.on('file', (name, stream, info) => {
    // A file input left empty still sends its part, with no name and no bytes.
    if (name !== upload.field || info.filename === '') {
      stream.resume();
      return;
    }
    const key = upload.newKey();
    receiving = stream;
    // Ended with an error when the form is refused, perhaps before anything reads it: no crash.
    stream.on('error', () => undefined);
    const keep = () =>
      upload.store.put(key, stream, upload.maxBytes).then(
        ({ bytes }) => (bytes === 0 ? upload.store.remove(key).then(() => null) : { key, bytes }),
        (err: unknown) => {
          stream.resume();
          if (err instanceof MediaTooLarge) fail(refusal(413, err.message));
          else if (err instanceof MediaUnavailable)
            fail(refusal(503, 'Recordings cannot be kept right now. Try again in a moment.'));
          else fail(refusal(400, 'The recording did not arrive whole.'));
          return null;
        },
      );
    // The fields before the file (the form's token comes first) are checked before its bytes are kept.
    stream.pause();
    const admitted = upload.admit ? upload.admit(new Map(fields)) : Promise.resolve(true);
    file = admitted.then(
      (ok) => {
        if (!ok) fail(refusal(403, 'The form was refused before its recording.'));
        return ok && !problem ? keep() : null;
      },
      () => {
        fail(refusal(503, 'Recordings cannot be kept right now. Try again in a moment.'));
        return null;
      },
    );
  });
  parser.on('fieldsLimit', () => fail(refusal(413, `A form is limited to ${MAX_FORM_FIELDS} fields.`)));
  parser.on('partsLimit', () => fail(refusal(413, `A form is limited to ${MAX_FORM_FIELDS} fields.`)));
  parser.on('filesLimit', () => fail(refusal(400, 'Send one recording at a time.')));

  const parsed = new Promise<void>((resolve) => {
    let stall: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      clearTimeout(stall);
      stall = setTimeout(() => fail(refusal(408, 'The form stopped arriving.')), limits.timeoutMs);
    };
    watch();
    source.on('data', watch);
    const done = () => {
      clearTimeout(stall);
      resolve();
    };
    parser.once('close', done);
    parser.once('error', () => {
      fail(refusal(400, 'The form could not be read (it is not well-formed multipart).'));
      done();
    });
    source.once('error', () => {
      fail(problem ?? refusal(400, 'The form did not arrive whole.'));
      done();
    });
    source.once('close', () => {
      if (problem) done();
    });
    source.pipe(parser);
  });
  await parsed;
  const received = await file;
  if (problem) {
    if (received) await upload.store.remove(received.key).catch(() => undefined);
    return problem;
  }
  const notText = [...fields.values()].some((values) => values.some((v) => v.includes('\uFFFD')));
  if (notText || holdsNul(fields)) {
    if (received) await upload.store.remove(received.key).catch(() => undefined);
    return refusal(400, notText ? 'The form is not valid UTF-8 text.' : NUL_REFUSED);
  }
  return received ? { ok: true, fields, file: received } : { ok: true, fields };
}

/** A NUL character in any field (or its name): no text of ours may hold one (PostgreSQL's text cannot). */
const holdsNul = (fields: Map<string, string[]>): boolean =>
  [...fields].some(([name, values]) => name.includes('\u0000') || values.some((v) => v.includes('\u0000')));

const NUL_REFUSED = 'The form holds a NUL character, which no text here may hold.';
