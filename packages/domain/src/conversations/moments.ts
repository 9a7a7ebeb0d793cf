import { clockTime } from '../shared/time.ts';

/*
 * Comments at a moment (issue 42): a reply in a recording's thread may say where in the recording
 * it speaks of (`at_seconds`: whole seconds from its start). The page marks each moment on the
 * recording's timeline and shows "at 1:23" on the reply; the API and the webhooks carry the number.
 */

/** The longest moment anyone may name (a day): past any recording this server keeps. */
export const MAX_MOMENT_SECONDS = 86_400;

/**
 * A moment typed into the reply form: "83", "1:23" or "1:02:03" (whole seconds; spaces around
 * allowed); undefined for an empty field, null for anything else.
 */
export function parseMoment(typed: string | undefined): number | undefined | null {
  const t = (typed ?? '').trim();
  if (t === '') return undefined;
  if (!/^\d{1,5}(:\d{1,2}){0,2}$/.test(t)) return null;
  const parts = t.split(':').map(Number);
  if (parts.slice(1).some((p) => p > 59)) return null;
  const seconds = parts.reduce((total, p) => total * 60 + p, 0);
  return seconds <= MAX_MOMENT_SECONDS ? seconds : null;
}

/** Why a moment cannot be kept: out of range, no recording's thread, past the recording's end. */
export type MomentProblem = { kind: 'range' } | { kind: 'no_recording' } | { kind: 'past_end'; length: number };

/**
 * Why a moment cannot be kept with a reply in this thread, or null: only a reply in a recording's
 * thread has one, and it lies within the recording (when its length is known).
 */
export function momentProblem(
  at: number | undefined,
  thread: { parentId: number | null; recording: { seconds: number } | null },
): MomentProblem | null {
  if (at === undefined) return null;
  if (!Number.isInteger(at) || at < 0 || at > MAX_MOMENT_SECONDS) return { kind: 'range' };
  if (thread.parentId === null || thread.recording === null) return { kind: 'no_recording' };
  const length = thread.recording.seconds;
  return length > 0 && at > length ? { kind: 'past_end', length } : null;
}

/** The problem as the API says it (the `at_seconds` member). */
export function momentApiText(p: MomentProblem): string {
  switch (p.kind) {
    case 'range':
      return `at_seconds: whole seconds from the recording's start, 0 to ${MAX_MOMENT_SECONDS}`;
    case 'no_recording':
      return "at_seconds: only a reply in a recording's thread has a moment (parent_message_id of a recording)";
    case 'past_end':
      return `at_seconds: past the recording's end (${p.length} seconds)`;
  }
}

/** The problem as the reply form says it (the "At" field). */
export function momentPageText(p: MomentProblem): string {
  switch (p.kind) {
    case 'range':
      return 'Write the moment as minutes and seconds (1:23), or leave it empty.';
    case 'no_recording':
      return 'Only a reply to a recording can point at a moment of it: leave "At" empty.';
    case 'past_end':
      return `The recording is ${clockTime(p.length)} long: choose a moment within it.`;
  }
}
