import { describe, expect, it } from 'vitest';
import {
  emailProblem,
  formatCreatedTime,
  formatNiceTime,
  GENERATED_SLUG_LENGTH,
  generateSlug,
  generateToken,
  lookupCriteria,
  MAX_PAGE,
  normaliseHost,
  ordinal,
  PAGE_SIZE,
  pageWindow,
  renderTitle,
  replyText,
  STARTED_TITLE_WORDS_LENGTH,
  slugProblem,
  startedTitle,
  TITLE_MAX_LENGTH,
  titleProblem,
  tokenFromAuthorization,
} from '../src/index.ts';

const micros = (iso: string, extra = 0) => BigInt(Date.parse(iso)) * 1000n + BigInt(extra);

describe('slug validation', () => {
  it.each(['abc', 'A-b_C', '0', 'x'.repeat(100), '---', 'Conversation_2026'])('accepts %j', (s) => {
    expect(slugProblem(s)).toBeNull();
  });
  it.each([
    ['', /empty/],
    ['has space', /only/],
    ['dot.ted', /only/],
    ['slash/slug', /only/],
    ['ümlaut', /only/],
    ['emoji😀', /only/],
    ['tab\t', /only/],
    ['x'.repeat(101), /at most 100/],
  ])('refuses %j', (s, why) => {
    expect(slugProblem(s)).toMatch(why);
  });
});

describe('slug generation', () => {
  it('gives 25 lowercase hex characters that pass validation', () => {
    const slug = generateSlug();
    expect(slug).toMatch(/^[0-9a-f]{25}$/);
    expect(slug).toHaveLength(GENERATED_SLUG_LENGTH);
    expect(slugProblem(slug)).toBeNull();
  });
  it('does not repeat across many draws (100 random bits)', () => {
    const seen = new Set(Array.from({ length: 10_000 }, generateSlug));
    expect(seen.size).toBe(10_000);
  });
  it('uses every hex digit in every position over many draws', () => {
    const first = new Set(Array.from({ length: 2_000 }, () => generateSlug()[0]));
    const last = new Set(Array.from({ length: 2_000 }, () => generateSlug()[24]));
    expect(first.size).toBe(16);
    expect(last.size).toBe(16);
  });
});

describe('titles', () => {
  it('titles a started conversation by who and what: their name and first words, on one line', () => {
    expect(startedTitle('Tom Tester', { text: 'I need help with my invoice' })).toBe(
      'Tom Tester: I need help with my invoice',
    );
    expect(startedTitle(' Tom\n Tester ', { text: 'Hello,\n\nmy   invoice\tis wrong' })).toBe(
      'Tom Tester: Hello, my invoice is wrong',
    );
    expect(startedTitle(null, { text: 'Hi there' })).toBe('A visitor: Hi there');
  });
  it('cuts long words at a word, and names a recording sent without words by its kind', () => {
    const long = startedTitle('Sam', { text: `${'word '.repeat(40)}end` });
    expect(long).toMatch(/^Sam: (word ){15}word…$/);
    expect(Array.from(long ?? '').length).toBeLessThanOrEqual('Sam: '.length + STARTED_TITLE_WORDS_LENGTH + 1);
    expect(startedTitle('Sam', { text: 'x'.repeat(200) })).toBe(`Sam: ${'x'.repeat(80)}…`);
    expect(startedTitle('Sam', { text: '  ', mediaKind: 'video' })).toBe('Sam: Video message');
    expect(startedTitle(null, { text: '', mediaKind: 'screen' })).toBe('A visitor: Screen recording');
    expect(startedTitle('Sam', { text: '', mediaKind: 'audio' })).toBe('Sam: Audio message');
    // Nothing to say: the account's naming applies.
    expect(startedTitle('Sam', { text: ' ' })).toBeNull();
  });
  it('titles a start by the page’s pattern when it has one, never reading what was typed as a placeholder', () => {
    const page = {
      pattern: 'Support – {page}: {words} ({name}, {date})',
      page: 'Contact us',
      now: new Date('2026-11-21T10:00:00Z'),
    };
    expect(startedTitle('Tom', { text: 'My invoice' }, page)).toBe(
      'Support – Contact us: My invoice (Tom, November 21st, 2026)',
    );
    expect(startedTitle(null, { text: '{name} {date}' }, page)).toBe(
      'Support – Contact us: {name} {date} (A visitor, November 21st, 2026)',
    );
    expect(startedTitle('Sam', { text: '', mediaKind: 'video' }, { ...page, pattern: 'New: {words}' })).toBe(
      'New: Video message',
    );
    // A pattern of placeholders alone that render to nothing: the account's naming applies.
    expect(startedTitle('Sam', { text: '' }, { ...page, pattern: '{words}' })).toBeNull();
    expect(
      startedTitle('Sam', { text: 'x'.repeat(80) }, { ...page, pattern: `${'y'.repeat(190)} {words}` })?.length,
    ).toBe(255);
  });
  it('renders the default template like the original service', () => {
    expect(renderTitle('{date} Conversation', new Date('2026-11-21T10:00:00Z'))).toBe(
      'November 21st, 2026 Conversation',
    );
  });
  it('renders in UTC, not local time', () => {
    expect(renderTitle('{date}', new Date('2026-01-01T23:30:00-05:00'))).toBe('January 2nd, 2026');
  });
  it('renders {time} and repeated placeholders', () => {
    expect(renderTitle('{date} at {time} / {date}', new Date('2022-02-01T17:21:09Z'))).toBe(
      'February 1st, 2022 at 05:21PM UTC / February 1st, 2022',
    );
  });
  it('keeps a template without placeholders as is, cut to the maximum length', () => {
    expect(renderTitle('Support', new Date())).toBe('Support');
    expect(renderTitle('x'.repeat(300), new Date())).toHaveLength(TITLE_MAX_LENGTH);
  });
  it('validates given titles', () => {
    expect(titleProblem('Hello')).toBeNull();
    expect(titleProblem('')).toMatch(/empty/);
    expect(titleProblem('x'.repeat(TITLE_MAX_LENGTH))).toBeNull();
    expect(titleProblem('x'.repeat(TITLE_MAX_LENGTH + 1))).toMatch(/at most/);
    expect(titleProblem('a\u0000b')).toMatch(/NUL/);
  });
});

describe('ordinals', () => {
  it.each([
    [1, '1st'],
    [2, '2nd'],
    [3, '3rd'],
    [4, '4th'],
    [10, '10th'],
    [11, '11th'],
    [12, '12th'],
    [13, '13th'],
    [21, '21st'],
    [22, '22nd'],
    [23, '23rd'],
    [24, '24th'],
    [30, '30th'],
    [31, '31st'],
  ])('%i → %s', (n, s) => expect(ordinal(n)).toBe(s));
});

describe('creation time formats', () => {
  it('keeps the real microseconds', () => {
    expect(formatCreatedTime(micros('2022-02-01T17:21:09.123Z', 456))).toBe('2022-02-01 17:21:09.123456');
  });
  it('pads small parts', () => {
    expect(formatCreatedTime(micros('2026-03-04T05:06:07.000Z', 8))).toBe('2026-03-04 05:06:07.000008');
  });
  it('handles times before the epoch', () => {
    expect(formatCreatedTime(micros('1969-12-31T23:59:59.000Z', 500_000))).toBe('1969-12-31 23:59:59.500000');
  });
  it('formats the nice time like the original service', () => {
    expect(formatNiceTime(micros('2022-02-01T17:21:00Z'))).toBe('February 1st, 2022 05:21PM UTC');
  });
  it.each([
    ['2026-11-21T00:05:00Z', 'November 21st, 2026 12:05AM UTC'],
    ['2026-11-22T12:00:00Z', 'November 22nd, 2026 12:00PM UTC'],
    ['2026-11-23T11:59:59.999Z', 'November 23rd, 2026 11:59AM UTC'],
    ['2026-12-31T23:59:00Z', 'December 31st, 2026 11:59PM UTC'],
    ['2026-01-11T13:01:00Z', 'January 11th, 2026 01:01PM UTC'],
    ['2026-01-12T09:09:00Z', 'January 12th, 2026 09:09AM UTC'],
    ['2026-01-13T10:00:00Z', 'January 13th, 2026 10:00AM UTC'],
  ])('%s → %s', (iso, nice) => expect(formatNiceTime(micros(iso))).toBe(nice));
});

describe('URL builders', () => {
  const a = { host: 'https://acme.example.com', key: 'acme' };
  it('builds every documented URL', async () => {
    const { conversationUrl, conversationEmbedUrl, messageUrl, embedMessageUrl } = await import('../src/index.ts');
    const url = conversationUrl(a, 'hello');
    expect(url).toBe('https://acme.example.com/c/hello');
    expect(conversationEmbedUrl(a, 'hello')).toBe('https://acme.example.com/embeds/conversations/acme/hello');
    expect(messageUrl(url, 7)).toBe('https://acme.example.com/c/hello#message-7');
    expect(embedMessageUrl(a, 7)).toBe('https://acme.example.com/embeds/messages/acme/7&show_author=true');
  });
  it('normalises operator-given hosts to an origin', () => {
    expect(normaliseHost('acme.example.com')).toBe('https://acme.example.com');
    expect(normaliseHost('http://localhost:3000/')).toBe('http://localhost:3000');
    expect(normaliseHost('https://acme.example.com/path')).toBeNull();
    expect(normaliseHost('ftp://acme.example.com')).toBeNull();
    expect(normaliseHost('not a host')).toBeNull();
  });
});

describe('lookup criteria', () => {
  it('ignores case on both keys and keeps only what was given', () => {
    expect(lookupCriteria({})).toEqual({});
    expect(lookupCriteria({ title: 'Hello World' })).toEqual({ titleKey: 'hello world' });
    expect(lookupCriteria({ slug: 'AbC' })).toEqual({ slugKey: 'abc' });
    expect(lookupCriteria({ title: 'ÄRGER', slug: 'X' })).toEqual({ titleKey: 'ärger', slugKey: 'x' });
    expect(lookupCriteria({ title: 'a\u0000', slug: 'x' })).toEqual({});
  });
});

describe('paging', () => {
  it('counts pages from 1, 50 a page', () => {
    expect(pageWindow()).toEqual({ limit: 50, offset: 0 });
    expect(pageWindow(1)).toEqual({ limit: 50, offset: 0 });
    expect(pageWindow(2)).toEqual({ limit: 50, offset: 50 });
    expect(pageWindow(2000)).toEqual({ limit: PAGE_SIZE, offset: 99_950 });
    expect(pageWindow(MAX_PAGE).offset).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
  });
  it.each([0, -1, 1.5, Number.NaN, MAX_PAGE + 1])('refuses page %s', (p) => {
    expect(() => pageWindow(p)).toThrow(RangeError);
  });
});

describe('tokens', () => {
  it('are prefixed, long and distinct', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).toMatch(/^cnv_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });
  it('are read from a raw or Bearer Authorization header', () => {
    expect(tokenFromAuthorization('cnv_abc')).toBe('cnv_abc');
    expect(tokenFromAuthorization('Bearer cnv_abc')).toBe('cnv_abc');
    expect(tokenFromAuthorization('bearer   cnv_abc ')).toBe('cnv_abc');
    expect(tokenFromAuthorization(null)).toBeNull();
    expect(tokenFromAuthorization('')).toBeNull();
    expect(tokenFromAuthorization('Bearer ')).toBeNull();
    expect(tokenFromAuthorization('Bearer a b')).toBeNull();
    expect(tokenFromAuthorization('x'.repeat(600))).toBeNull();
  });
});

describe('people', () => {
  it.each(['a@b', 'a@b.', 'no-at-sign', 'two@@at.example', 'space in@x.example', `${'x'.repeat(320)}@x.example`, ''])(
    'refuses %s as an e-mail address',
    (address) => {
      expect(emailProblem(address)).not.toBeNull();
    },
  );

  it.each(['rita@else.example', 'Olivia.Owner+news@talk.example.com', '  padded@x.example  ', 'Zoë@gen.example'])(
    'takes %s',
    (address) => {
      expect(emailProblem(address)).toBeNull();
    },
  );

  it('stores a reply with \\n line breaks, trimmed', () => {
    expect(replyText('  one\r\ntwo\rthree\nfour \r\n')).toBe('one\ntwo\nthree\nfour');
  });
});
