/*
 * Transcripts of recordings (issue 43): what the operator's speech engine hears in a recording's
 * audio, as timed segments, and the captions (WebVTT) made of them. The engine is the operator's
 * own, reached through a Transcriber (the port); the product never bundles one.
 */

/** One stretch of speech: from `start` to `end`, in seconds from the recording's start. */
export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

/** What an engine heard: its segments in order, their text joined, and the language it heard. */
export interface Transcript {
  /** ISO 639-1 where the engine says it (`en`); null where it does not. */
  language: string | null;
  text: string;
  segments: TranscriptSegment[];
}

/** A recording's audio as the engine is sent it: a file of its own, with its name and type. */
export interface TranscriberAudio {
  file: Blob;
  /** The file's name as sent (`message-12.ogg`): engines read its extension. */
  name: string;
}

/** The speech engine, whichever the operator runs (TRANSCRIBE_URL). */
export interface Transcriber {
  /** The audio's transcript; a TranscriptionFailed when the engine could not give one. */
  transcribe(audio: TranscriberAudio): Promise<Transcript>;
}

/**
 * Why an engine gave no transcript, in words the team reads beside the recording; `retryable`
 * when trying again later may do better (the engine down, busy or slow), not when the engine
 * refused the request itself (a wrong model, a key it does not take, audio it cannot read).
 */
export class TranscriptionFailed extends Error {
  readonly retryable: boolean;

  constructor(reason: string, retryable: boolean) {
    super(reason);
    this.name = 'TranscriptionFailed';
    this.retryable = retryable;
  }
}

/** `hh:mm:ss.mmm`, as a WebVTT cue's timing writes a time. */
export function vttTime(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

/**
 * The captions of a transcript, as a WebVTT file: a cue a segment, in order. A cue's text may not
 * hold `-->` or a blank line, and `&` and `<` start markup: they are written as text.
 */
export function webVtt(segments: readonly TranscriptSegment[]): string {
  const cues = segments
    .map((s) => ({ ...s, text: cueText(s.text) }))
    .filter((s) => s.text !== '' && s.end >= s.start)
    .map((s) => `${vttTime(s.start)} --> ${vttTime(s.end)}\n${s.text}`);
  return `WEBVTT\n\n${cues.map((cue) => `${cue}\n\n`).join('')}`;
}

const cueText = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n');

/** A transcript's text: its segments' text, one after another. */
export const transcriptText = (segments: readonly TranscriptSegment[]): string =>
  segments
    .map((s) => s.text.trim())
    .filter((t) => t !== '')
    .join(' ');
