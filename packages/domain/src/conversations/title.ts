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

/**
 * Titles are matched exactly but ignoring case; this is the form they are compared in: NFC, then
 * Unicode full case folding (CaseFolding.txt, statuses C and F, with no Turkic special case),
 * then NFC again (folding can decompose). So `Straße` matches `STRASSE`, `ΟΔΟΣ` matches `οδοσ`
 * (final sigma), `ﬁ` matches `FI`, and a title typed precomposed matches one typed decomposed.
 */
export const titleKey = (title: string): string => caseFold(title.normalize('NFC')).normalize('NFC');
