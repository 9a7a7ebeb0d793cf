import { describe, expect, it } from 'vitest';
import { normalTags, searchTerms, snippet, stateAfterMessage, tagsFromText, tagsProblem } from '../src/index.ts';

describe('a conversation’s state after a message', () => {
  it('opens on a message from the other side, whatever it was', () => {
    for (const s of ['open', 'waiting', 'closed'] as const) expect(stateAfterMessage(s, false)).toBe('open');
  });
  it('waits on them after the team answers an open one; the team leaves the others as they are', () => {
    expect(stateAfterMessage('open', true)).toBe('waiting');
    expect(stateAfterMessage('waiting', true)).toBe('waiting');
    expect(stateAfterMessage('closed', true)).toBe('closed');
  });
});

describe('tags as the team types them', () => {
  it('keeps each name once, ignoring case, trimmed, in the order given', () => {
    expect(normalTags([' billing', 'Urgent', 'BILLING ', ''])).toEqual(['billing', 'Urgent']);
    expect(tagsFromText('billing, urgent,, ,vip')).toEqual(['billing', ' urgent', 'vip']);
  });
  it('says what is wrong: an empty name, a long one, too many', () => {
    expect(tagsProblem([' '])).toBe('a tag must not be empty');
    expect(tagsProblem(['x'.repeat(101)])).toBe('a tag must be at most 100 characters');
    expect(tagsProblem(Array.from({ length: 21 }, (_, i) => `t${i}`))).toBe('a conversation has at most 20 tags');
    expect(tagsProblem(Array.from({ length: 21 }, () => 'same'))).toBeNull();
  });
});

describe('the inbox’s snippet of the latest message', () => {
  it('is its words on one line, cut at a word after 140 characters', () => {
    expect(snippet({ kind: 'text', text: 'Hello\n\nthere', seconds: 0, author: null })).toBe('Hello there');
    const long = `${'word '.repeat(40)}end`;
    const cut = snippet({ kind: 'text', text: long, seconds: 0, author: null });
    expect(cut.endsWith('word…')).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(141);
  });
  it('names a recording without words by its kind and length', () => {
    expect(snippet({ kind: 'video', text: '', seconds: 42, author: 'Tom' })).toBe('Video message, 0:42');
    expect(snippet({ kind: 'audio', text: ' ', seconds: 3725, author: 'Tom' })).toBe('Audio message, 1:02:05');
  });
});

describe('the inbox’s search as it is typed', () => {
  it('asks for every word whole but the last, which may be a word’s start; nothing typed is syntax', () => {
    expect(searchTerms('Invoice  inv')).toBe('invoice & inv:*');
    expect(searchTerms('HOUR')).toBe('hour:*');
    expect(searchTerms("quiet & !one | ' :* quiet")).toBe('quiet & one:*');
    expect(searchTerms(' !? ')).toBeNull();
    expect(searchTerms('a b c d e f g h i j')).toBe('a & b & c & d & e & f & g & h:*');
  });
});
