import { caseFold } from 'unicode-case-folding';
import { textProblem } from '../shared/text.ts';
import { formatClockTime, formatLongDate } from '../shared/time.ts';

export const TITLE_MAX_LENGTH = 255;
export const TITLE_TEMPLATE_MAX_LENGTH = 200;
export const DEFAULT_TITLE_TEMPLATE = '{date} Conversation';

/** Placeholders an account's naming template may use, rendered in UTC. */
export const TITLE_PLACEHOLDERS = {
  '{date}': formatLongDate,
  '{time}': formatClockTime,
} as const;

export function titleProblem(title: string): string | null {
  if (title.length === 0) return 'title must not be empty';
  if (title.length > TITLE_MAX_LENGTH) return `title must be at most ${TITLE_MAX_LENGTH} characters`;
  return textProblem('title', title);
}

export function titleTemplateProblem(template: string): string | null {
  if (template.trim().length === 0) return 'title template must not be empty';
  if (template.length > TITLE_TEMPLATE_MAX_LENGTH) {
    return `title template must be at most ${TITLE_TEMPLATE_MAX_LENGTH} characters`;
  }
  return null;
}

/** Renders an account's naming convention for a conversation created at `now`. */
export function renderTitle(template: string, now: Date): string {
  let title = template;
  for (const [placeholder, render] of Object.entries(TITLE_PLACEHOLDERS)) {
    title = title.replaceAll(placeholder, render(now));
  }
  return title.slice(0, TITLE_MAX_LENGTH);
}

/** How much of a person's first words a started conversation's title carries. */
export const STARTED_TITLE_WORDS_LENGTH = 80;

/** What a recording is called where its words would be, by its kind. */
const RECORDING_NAMES: Record<string, string> = {
  video: 'Video message',
  screen: 'Screen recording',
  audio: 'Audio message',
};

/** A recording named by its kind, where its words would be: "Video message". */
export const recordingName = (kind: string): string => RECORDING_NAMES[kind] ?? 'Recording';

/**
 * The title of a conversation a person started on an intake page: who and what, "Tom Tester: I
 * need help with my invoice", or as the page's pattern says ("Support: {words}"). Their first words on one line, cut at a word within
 * STARTED_TITLE_WORDS_LENGTH characters ("…" after); a recording sent without words is named by
 * its kind; an anonymous start is "A visitor". Null when nothing of it makes a title (the
 * account's naming applies then).
 */
export function startedTitle(
  who: string | null,
  message: { text: string; mediaKind?: string | undefined },
  /** The intake page's pattern (empty: "{name}: {words}"), its name and the time of the start. */
  page: { pattern: string; page: string; now: Date } = { pattern: '', page: '', now: new Date() },
): string | null {
  const words = message.text.replace(/\s+/gu, ' ').trim();
  const said = words.length <= STARTED_TITLE_WORDS_LENGTH ? words : `${cutAtWord(words, STARTED_TITLE_WORDS_LENGTH)}…`;
  const what = said || (message.mediaKind ? recordingName(message.mediaKind) : '');
  const name = (who ?? '').replace(/\s+/gu, ' ').trim() || 'A visitor';
  if (page.pattern.trim() === '') {
    if (!what) return null;
    const title = `${name}: ${what}`;
    return titleProblem(title) ? null : title;
  }
  // One pass over the pattern: what a visitor typed is never read as a placeholder.
  const values: Record<string, string> = { '{name}': name, '{words}': what, '{page}': page.page };
  for (const [placeholder, render] of Object.entries(TITLE_PLACEHOLDERS)) values[placeholder] = render(page.now);
  const title = page.pattern
    .replace(/\{(?:name|words|page|date|time)\}/g, (placeholder) => values[placeholder] ?? placeholder)
    .replace(/\s+/gu, ' ')
    .trim()
    .slice(0, TITLE_MAX_LENGTH);
  return title === '' || titleProblem(title) ? null : title;
}

/** `text` cut to at most `length` characters, at the last space if there is one past the middle. */
export function cutAtWord(text: string, length: number): string {
  const cut = Array.from(text).slice(0, length).join('');
  const space = cut.lastIndexOf(' ');
  return (space > length / 2 ? cut.slice(0, space) : cut).trimEnd();
}

/**
 * Titles are matched exactly but ignoring case; this is the form they are compared in: NFC, then
 * Unicode full case folding (CaseFolding.txt, statuses C and F, with no Turkic special case),
 * then NFC again (folding can decompose). So `Straße` matches `STRASSE`, `ΟΔΟΣ` matches `οδοσ`
 * (final sigma), `ﬁ` matches `FI`, and a title typed precomposed matches one typed decomposed.
 */
export const titleKey = (title: string): string => caseFold(title.normalize('NFC')).normalize('NFC');
