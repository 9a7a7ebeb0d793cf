import { find } from 'linkifyjs';
import { describe, expect, it } from 'vitest';
import { linkified } from '../src/views/conversation.ts';

/*
 * A message's words with their web addresses as links: what linkifyjs finds is linked, whatever
 * shape it has (a bare name, a scheme's address without a dot, localhost), and the rest is text,
 * escaped. Text no address can be in skips the scanner: the two must agree.
 */

const links = (text: string) => [...String(linkified(text)).matchAll(/<a href="([^"]+)"/g)].map((m) => m[1]);
const webLinks = (text: string) =>
  find(text, 'url')
    .map((f) => f.href)
    .filter((href) => /^https?:/.test(href))
    .map((href) => new URL(href).href);

describe('linkified', () => {
  it('links every web address linkifyjs finds, and nothing else', () => {
    const words = [
      'see',
      'example.com/a?b=1',
      'http://localhost:3000/x',
      'localhost',
      'https://intranet/page',
      'Hi.',
      'e.g.',
      '1.2.3.4',
      'a@b.co',
      'x:y',
      '<b>bold</b>',
      'WWW.EXAMPLE.ORG',
      'ftp://files',
      '…',
      'end.',
    ];
    // Every pair of the words, in both orders, with a space and without.
    for (const a of words) {
      for (const b of words) {
        for (const text of [`${a} ${b}`, `${a}${b}`]) expect(links(text), text).toEqual(webLinks(text));
      }
    }
  });

  it('escapes the words it does not link', () => {
    expect(String(linkified('Message 3 of <conversation> & more'))).toBe(
      'Message 3 of &lt;conversation&gt; &amp; more',
    );
    expect(String(linkified('Go to example.com <now>'))).toBe(
      'Go to <a href="http://example.com/" rel="nofollow ugc noopener">example.com</a> &lt;now&gt;',
    );
  });
});
