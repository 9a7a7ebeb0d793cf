import { z } from 'zod';
import { textProblem } from './text.ts';

/* What a person's name and e-mail address must be, wherever one is given (pages, the CLI, steps). */

export const EMAIL_MAX_LENGTH = 320;

/**
 * An e-mail address as zod's `z.email()` takes international ones (`z.regexes.unicodeEmail`: a
 * local part of up to 64 characters, `Zoë@…` too), whose domain has a dot (no `a@b`), at most
 * EMAIL_MAX_LENGTH characters: the address is proven by the mail it receives, this only refuses
 * what cannot receive one.
 */
const ZEmail = z
  .email({ pattern: z.regexes.unicodeEmail })
  .refine((address) => /\.[^.]+$/.test(address.slice(address.lastIndexOf('@') + 1)));

export const isEmailAddress = (value: string): boolean =>
  value.length <= EMAIL_MAX_LENGTH && ZEmail.safeParse(value).success;

export function emailProblem(email: string): string | null {
  const trimmed = email.trim();
  if (trimmed.length === 0) return 'Give your e-mail address.';
  if (!isEmailAddress(trimmed) || textProblem('e-mail', trimmed)) {
    return 'That is not an e-mail address.';
  }
  return null;
}

export const NAME_MAX_LENGTH = 255;

export function nameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed.length === 0) return 'Give your name.';
  if (trimmed.length > NAME_MAX_LENGTH) return `A name is at most ${NAME_MAX_LENGTH} characters.`;
  return textProblem('The name', trimmed);
}

/**
 * A name nobody verified, as pages and mails show it: an anonymous reply's name, or an intake
 * start's until its address is confirmed. The message stays anonymous in the API.
 */
export const UNVERIFIED_NAME_SUFFIX = ' (not verified)';
export const unverifiedName = (name: string): string => `${name}${UNVERIFIED_NAME_SUFFIX}`;
