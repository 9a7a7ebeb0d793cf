import { type Transcriber, TranscriptionFailed, type TranscriptSegment, transcriptText } from '@convo/domain';
import { z } from 'zod';

/*
 * The Transcriber for the one protocol self-hosted speech engines share (whisper.cpp's server,
 * speaches, LocalAI) with OpenAI's own: `POST <base>/audio/transcriptions`, a multipart form of the
 * audio `file`, the `model` and the `response_format`, answered with the transcript. Asked for
 * `verbose_json`, which carries timed segments. The audio goes to the configured address and no
 * other: a redirect is not followed.
 */

export interface OpenAiTranscriberOptions {
  /** The engine's base URL, up to its API's version: `http://127.0.0.1:8000/v1` (TRANSCRIBE_URL). */
  url: string;
  /** The engine's model name (TRANSCRIBE_MODEL): `whisper-1`, `Systran/faster-whisper-small`, … */
  model: string;
  /** Sent as `Authorization: Bearer <key>` when set (TRANSCRIBE_API_KEY). */
  apiKey?: string | undefined;
  /** The language spoken (ISO 639-1, TRANSCRIBE_LANGUAGE); unset: the engine detects it. */
  language?: string | undefined;
  /** How long the engine may take to answer, the audio's upload included. */
  timeoutMs: number;
}

/** An answer longer than this is no transcript of a recording we keep. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** The parts of a `verbose_json` answer read here; engines add others. */
const ZVerboseTranscript = z.object({
  text: z.string().optional(),
  language: z.string().nullish(),
  segments: z.array(z.object({ start: z.number().min(0), end: z.number().min(0), text: z.string() })).nullish(),
});

/** The endpoint under a base URL given with or without its trailing slash. */
export const transcriptionsEndpoint = (base: string): URL =>
  new URL('audio/transcriptions', base.endsWith('/') ? base : `${base}/`);

export function openAiTranscriber(options: OpenAiTranscriberOptions): Transcriber {
  const endpoint = transcriptionsEndpoint(options.url);
  const seconds = Math.round(options.timeoutMs / 100) / 10;
  return {
    async transcribe(audio) {
      const form = new FormData();
      form.append('file', audio.file, audio.name);
      form.append('model', options.model);
      form.append('response_format', 'verbose_json');
      form.append('timestamp_granularities[]', 'segment');
      if (options.language) form.append('language', options.language);
      const signal = AbortSignal.timeout(options.timeoutMs);
      let res: Response;
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          body: form,
          headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
          redirect: 'manual',
          signal,
        });
      } catch (err) {
        throw signal.aborted
          ? new TranscriptionFailed(`the speech engine did not answer within ${seconds} s`, true)
          : new TranscriptionFailed(`the speech engine could not be reached (${causeOf(err)})`, true);
      }
      try {
        if (res.status >= 300 && res.status < 400) {
          throw new TranscriptionFailed(
            `the speech engine answered ${res.status}, a redirect, which is not followed: set TRANSCRIBE_URL to where it points`,
            false,
          );
        }
        const text = await boundedText(res);
        if (!res.ok) {
          const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
          throw new TranscriptionFailed(`the speech engine answered ${res.status}${detailOf(text)}`, retryable);
        }
        return transcriptOf(text);
      } catch (err) {
        if (err instanceof TranscriptionFailed) throw err;
        throw signal.aborted
          ? new TranscriptionFailed(`the speech engine did not answer within ${seconds} s`, true)
          : new TranscriptionFailed(`the speech engine's answer broke off (${causeOf(err)})`, true);
      } finally {
        if (!res.bodyUsed) await res.body?.cancel().catch(() => undefined);
      }
    },
  };
}

/** A `verbose_json` answer as a transcript; a TranscriptionFailed when it is none. */
function transcriptOf(text: string) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TranscriptionFailed('the speech engine answered something that is not JSON', false);
  }
  const parsed = ZVerboseTranscript.safeParse(json);
  if (!parsed.success) {
    throw new TranscriptionFailed('the speech engine answered JSON that is not a transcript', false);
  }
  const segments: TranscriptSegment[] = (parsed.data.segments ?? [])
    .map((s) => ({ start: s.start, end: Math.max(s.start, s.end), text: s.text.trim() }))
    .filter((s) => s.text !== '');
  const language = parsed.data.language?.trim().toLowerCase();
  return {
    language: language ? language.slice(0, 16) : null,
    text: parsed.data.text?.trim() || transcriptText(segments),
    segments,
  };
}

/** The answer's text, read up to MAX_ANSWER_BYTES. */
async function boundedText(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > MAX_ANSWER_BYTES) {
    throw new TranscriptionFailed(`the speech engine's answer is over ${MAX_ANSWER_BYTES >> 20} MB`, false);
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      throw new TranscriptionFailed(`the speech engine's answer is over ${MAX_ANSWER_BYTES >> 20} MB`, false);
    }
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** What an engine's refusal says (OpenAI's `{"error": {"message"}}`, or its text), short and on one line. */
function detailOf(text: string): string {
  let said = text;
  try {
    const json: unknown = JSON.parse(text);
    const message = z.object({ error: z.union([z.string(), z.object({ message: z.string() })]) }).safeParse(json);
    if (message.success)
      said = typeof message.data.error === 'string' ? message.data.error : message.data.error.message;
  } catch {
    // Not JSON: its text, as it is.
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  const line = said.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line ? `: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}` : '';
}

/** The network error's own code or message (`ECONNREFUSED`). */
function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (cause instanceof Error) {
    const code = 'code' in cause && typeof cause.code === 'string' ? cause.code : null;
    return code ?? cause.message;
  }
  return String(cause);
}
