import { describe, expect, it } from 'vitest';
import { messageBody, messageHtmlText, safeMessageHtml, toWellFormed } from '../src/index.ts';

describe('a message’s text as the API takes it', () => {
  it('keeps text without markup as written, a < b and x & y included', () => {
    expect(messageBody('  a < b & c\r\nnext  ')).toEqual({ text: 'a < b & c\nnext', format: 'text' });
  });

  it('keeps markup as the safe subset, links bare addresses outside links, and mails its words', () => {
    const { text, format } = messageBody(
      '<p>See https://x.example/a?b=1&amp;c=2 and <a href="https://y.example">y</a><script>no()</script></p><p>2 &lt; 3</p>',
    );
    expect(format).toBe('html');
    expect(text).toBe(
      '<p>See <a href="https://x.example/a?b=1&amp;c=2" rel="nofollow ugc noopener">https://x.example/a?b=1&amp;c=2</a> and ' +
        '<a href="https://y.example" rel="nofollow ugc noopener">y</a></p><p>2 &lt; 3</p>',
    );
    // Sanitizing again changes nothing (the pages do, before they show it).
    expect(safeMessageHtml(text)).toBe(text);
    expect(messageHtmlText(text)).toBe('See https://x.example/a?b=1&c=2 and y\n2 < 3');
    // A link whose address is not allowed is only its text.
    expect(messageBody('<p><a href="javascript:alert(1)" onclick="x()">click</a> me</p>').text).toBe('<p>click me</p>');
  });

  it('refuses what is not a message', () => {
    expect(() => messageBody('')).toThrow('text: Write a message, or send a recording.');
    expect(() => messageBody('<img src=x onerror=alert(1)>')).toThrow(/nothing is left/);
    expect(() => messageBody('x\u0000')).toThrow(/NUL/);
  });
});

describe('text the service cut itself, made well-formed', () => {
  it('turns each lone surrogate into U+FFFD, call after call, and leaves pairs alone', () => {
    for (let i = 0; i < 3; i++) {
      expect(toWellFormed('a\uD83Db\uDC00c')).toBe('a\uFFFDb\uFFFDc');
      expect(toWellFormed('ok 🎬')).toBe('ok 🎬');
    }
  });
});
