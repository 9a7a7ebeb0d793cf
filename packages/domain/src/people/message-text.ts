import { find } from 'linkifyjs';
import sanitizeHtml from 'sanitize-html';
import type { MessageFormat } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { replyProblem, replyText } from './people.ts';

/*
 * The text of a message posted through the API. Text without markup is kept as it is written, as
 * a reply on the page is (the page shows its line breaks and makes its web addresses links). Text
 * with markup may use a small, safe subset of HTML: paragraphs, line breaks, bold, italics, links,
 * lists, quotes and code; anything else is removed on the way in by sanitize-html (a script's or a
 * style's content with it, an event attribute, a `javascript:` link), and a bare web address
 * becomes a link. Such a message is kept as that HTML (`html`): the pages show it as HTML again
 * through the same rule, and mail shows its text.
 */

/** Markup: a tag, or a character reference. `a < b` and `x & y` are text. */
const MARKUP = /<\/?[a-z][a-z0-9]*(?:\s[^<>]*)?\/?>|&(?:#\d{1,7}|#x[\da-f]{1,6}|[a-z][a-z\d]{1,31});/i;

/** Rel of every link a message carries: the writer's, not the site's word. */
const LINK_REL = 'nofollow ugc noopener';

/** The four characters sanitize-html escapes in text, and back. */
const escapeText = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unescapeText = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** Bare web addresses in escaped text, as links: found in the text as it reads, escaped again. */
function linkifyEscaped(escaped: string): string {
  const text = unescapeText(escaped);
  let out = '';
  let at = 0;
  for (const found of find(text, 'url')) {
    if (!/^https?:\/\//i.test(found.href)) continue;
    const link = `<a href="${escapeText(found.href)}" rel="${LINK_REL}">${escapeText(found.value)}</a>`;
    out += `${escapeText(text.slice(at, found.start))}${link}`;
    at = found.end;
  }
  return out + escapeText(text.slice(at));
}

/**
 * The bare web addresses of sanitized HTML as links, outside the links it has; a link left without
 * an address (a `javascript:` one) is only its text. Its tags never hold a `>` (sanitize-html
 * escapes one in an attribute), so they split it from its text; a text node is whole here, where
 * sanitize-html's own text filter sees it cut at every character reference.
 */
function linkifyHtml(safe: string): string {
  /** The open links, each with whether it was kept (it has an address). */
  const links: boolean[] = [];
  return safe
    .split(/(<[^>]*>)/)
    .map((part) => {
      if (/^<a[\s>]/i.test(part)) {
        const kept = /\shref="/i.test(part);
        links.push(kept);
        return kept ? part : '';
      }
      if (/^<\/a>/i.test(part)) return links.pop() === false ? '' : part;
      if (part.startsWith('<')) return part;
      return links.some((kept) => kept) || part === '' ? part : linkifyEscaped(part);
    })
    .join('');
}

const SUBSET: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'b', 'strong', 'i', 'em', 'a', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre'],
  allowedAttributes: { a: ['href', 'rel'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    a: (_tag, attribs) => ({
      tagName: 'a',
      attribs: { ...(attribs.href ? { href: attribs.href } : {}), rel: LINK_REL },
    }),
  },
};

/** HTML of the safe subset, whatever was given (what the pages show of an `html` message, checked again). */
export const safeMessageHtml = (text: string): string => linkifyHtml(sanitizeHtml(text, SUBSET));

/** The words of an `html` message without its markup (for mail and snippets). */
export const messageHtmlText = (html: string): string =>
  unescapeText(
    sanitizeHtml(html.replace(/<br\s*\/?>|<\/(?:p|li|blockquote|pre)>/gi, '\n'), {
      allowedTags: [],
      allowedAttributes: {},
    }),
  )
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/**
 * A message's text as the API is given it: refused (422) when it is empty, too long or not text;
 * kept as written without markup, else as the safe subset of HTML.
 */
export function messageBody(given: string): { text: string; format: MessageFormat } {
  const problem = replyProblem(given, 'message');
  if (problem) throw new DomainError('invalid_input', `text: ${problem}`);
  const text = replyText(given);
  if (!MARKUP.test(text)) return { text, format: 'text' };
  const html = safeMessageHtml(text).trim();
  if (messageHtmlText(html) === '') {
    throw new DomainError(
      'invalid_input',
      'text: nothing is left of it once the markup that is not allowed is removed',
    );
  }
  return { text: html, format: 'html' };
}
