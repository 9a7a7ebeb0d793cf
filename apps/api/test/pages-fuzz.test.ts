import { loadSeed } from '@convo/db';
import { textProblem, titleProblem } from '@convo/domain';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openHarness } from './support/harness.ts';
import { attr, elements, open, present, textOf } from './support/site.ts';

/*
 * Whatever people put in a title, a tag, their name or a message (markup, attribute breakouts,
 * `javascript:` links), the page shows it as text: a browser's parser (parse5) finds only the
 * elements and attributes the views write, every link is ours or a web address, and each value
 * reads back whole. FUZZ_RUNS scales the cases (each is a fresh account with one conversation).
 */

const RUNS = Math.max(50, Math.round(Number(process.env.FUZZ_RUNS ?? (process.env.CI ? 10_000 : 1_000)) / 10));

const ELEMENTS = new Set(
  'html head body meta title link header main footer p article h1 h2 ul ol li time a span div section nav form input textarea label button figure figcaption video audio details summary'.split(
    ' ',
  ),
);
const ATTRIBUTES = new Set(
  'lang charset name content rel href property class id datetime target aria-labelledby aria-label start method action type value for rows maxlength required autocomplete role enctype data-max-seconds data-conversation data-uploader data-events data-messages aria-describedby accept capture controls preload playsinline src download aria-pressed aria-hidden'.split(
    ' ',
  ),
);

const PAYLOADS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "'><svg onload=alert(1)>",
  '</title><script>alert(1)</script>',
  '</textarea></style></noscript><script>alert(1)</script>',
  '<a href="javascript:alert(1)">x</a>',
  'javascript:alert(1)',
  ' JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '&lt;script&gt;',
  '&amp;&quot;&#39;',
  '<!--',
  ']]><![CDATA[',
  '{{7*7}}',
  // A template literal's placeholder, as text.
  '$' + '{alert(1)}',
  '\u202e',
  '😀',
  '\r\n',
];

const hostile = fc
  .array(fc.oneof(fc.constantFrom(...PAYLOADS), fc.string({ maxLength: 12 })), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join(''));

const title = hostile.filter((t) => titleProblem(t) === null);
const text = hostile.filter((t) => textProblem('text', t) === null);
const name = text.filter((t) => t.trim().length > 0 && t.length <= 255);

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h?.close());

/** parse5 reads text as browsers do: a CR or CRLF becomes LF. */
const asRead = (s: string) => s.replace(/\r\n?/g, '\n');

describe('hostile text on the conversation pages', () => {
  it('never survives as markup, and reads back as the text it was', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          title,
          tag: text.filter((t) => t.trim().length > 0 && t.length <= 100),
          author: name,
          body: text,
          media: hostile,
        }),
        async (v) => {
          const key = `f${n++}`;
          const host = `https://${key}.example.com`;
          await loadSeed(h.db.orm.em.fork(), {
            accounts: [
              {
                key,
                name: v.author,
                host,
                users: [{ email: `a@${key}.example`, name: v.author }],
                conversations: [
                  {
                    title: v.title,
                    slug: 'x',
                    tags: [v.tag],
                    members: [`a@${key}.example`],
                    messages: [
                      { author: `a@${key}.example`, text: v.body, download_media_url: v.media, type: 'audio' },
                    ],
                  },
                ],
              },
            ],
          });
          const page = await open(h, `${host}/c/x`);
          expect(page.status).toBe(200);
          const embed = await open(h, `${host}/embeds/conversations/${key}/x`);
          for (const html of [page.html, embed.html]) {
            const els = elements(html);
            // The one script is the site's own file, empty inside: nothing a person wrote runs.
            const scripts = els.filter((e) => e.tagName === 'script');
            expect(scripts.map((e) => [attr(e, 'src'), e.attrs.map((a) => a.name).sort(), textOf(e)])).toEqual([
              [expect.stringMatching(/^\/assets\/site-[0-9a-f]{12}\.js$/), ['defer', 'src'], ''],
            ]);
            for (const e of els) {
              if (e === scripts[0]) continue;
              expect(ELEMENTS.has(e.tagName), e.tagName).toBe(true);
              for (const a of e.attrs) expect(ATTRIBUTES.has(a.name), a.name).toBe(true);
              const href = attr(e, 'href');
              if (href !== undefined) expect(href).toMatch(/^(\/|#|https?:\/\/)/);
            }
            expect(els.filter((e) => e.tagName === 'h1').map(textOf)).toEqual([asRead(v.title)]);
            // A message without text (a recording's missing caption) has no empty paragraph.
            expect(els.filter((e) => attr(e, 'class') === 'text').map(textOf)).toEqual(v.body ? [asRead(v.body)] : []);
            expect(els.filter((e) => attr(e, 'class') === 'author').map(textOf)).toEqual([asRead(v.author)]);
          }
          const tags = elements(page.html).find((e) => attr(e, 'class') === 'tags');
          expect(textOf(present(tags))).toBe(asRead(v.tag));
        },
      ),
      { numRuns: RUNS },
    );
  }, 600_000);
});

describe('hostile addresses on an account host', () => {
  it('answer in HTML with a 2xx or 4xx, never a 5xx, whatever the path and method', async () => {
    await loadSeed(h.db.orm.em.fork(), {
      accounts: [
        {
          key: 'paths',
          name: 'Paths',
          host: 'https://paths.example.com',
          conversations: [{ title: 'Here', slug: 'here', messages: [{ text: 'hello' }] }],
        },
      ],
    });
    const segment = fc.oneof(
      fc.constantFrom('c', 'embeds', 'conversations', 'messages', 'paths', 'here', 'HERE', 'robots.txt', 'assets'),
      fc.constantFrom('%', '%ff', '%00', '%2e%2e', '..', '&show_author=true', '?show_author=true', '1', '0', '-1'),
      fc.string({ maxLength: 20 }).map(encodeURIComponent),
      fc.stringMatching(/^[\d&=a-z_]{0,30}$/),
    );
    const path = fc.array(segment, { minLength: 0, maxLength: 5 }).map((parts) => `/${parts.join('/')}`);
    await fc.assert(
      fc.asyncProperty(path, fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'), async (p, method) => {
        let url: string;
        try {
          url = new URL(`https://paths.example.com${p}`).href;
        } catch {
          return;
        }
        if (!url.startsWith('https://paths.example.com/')) return;
        const res = await h.app.fetch(new Request(url, { method }));
        await res.text();
        // A POST to a form's address without the form's token is refused (403), or is no form
        // (415); a query that is no text (a NUL, bytes that are not UTF-8) is a 400.
        expect([200, 400, 403, 404, 405, 415], `${method} ${p}`).toContain(res.status);
        if (!url.includes('/api/') && !url.includes('/trpc/') && res.status !== 200) {
          expect(res.headers.get('content-type'), `${method} ${p}`).toMatch(/^text\/html/);
        }
      }),
      { numRuns: RUNS * 4 },
    );
  }, 600_000);
});

describe('hostile forms', () => {
  it('never answer a 5xx, and a refused form writes no message and no user', async () => {
    const { Visitor } = await import('./support/site.ts');
    const limitless = await openHarness({ app: { site: { limits: { perIpPerMinute: 0, perEmailPer15Minutes: 0 } } } });
    try {
      await loadSeed(limitless.db.orm.em.fork(), {
        accounts: [
          {
            key: 'forms',
            name: 'Forms',
            host: 'https://forms.example.com',
            users: [{ email: 'user@forms.example', name: 'User' }],
            conversations: [
              { title: 'Anyone', slug: 'anyone', allow_anonymous_messages: true },
              { title: 'Named', slug: 'named', allow_anonymous_messages: false },
            ],
          },
        ],
      });
      const v = new Visitor(limitless, 'https://forms.example.com');
      await v.get('/c/anyone');
      const csrf = v.hidden('csrf');
      const count = async () => {
        const [row] = await limitless.db.orm.em
          .fork()
          .getConnection()
          .execute('select (select count(*) from message)::int as m, (select count(*) from account_user)::int as u');
        return row as { m: number; u: number };
      };
      const value = fc.oneof(
        fc.string({ maxLength: 30 }),
        fc.constantFrom('', ' ', 'user@forms.example', 'x@y', 'not-an-email', 'a'.repeat(11_000), '%FF%FE', '\u0000'),
      );
      const pair = fc.tuple(fc.constantFrom('text', 'name', 'email', 'submit', 'return', 'csrf', 'x'), value);
      const body = fc.oneof(
        fc.array(pair, { maxLength: 6 }).map((pairs) => `csrf=${csrf}&${new URLSearchParams(pairs).toString()}`),
        fc.string({ unit: 'binary', maxLength: 200 }).map((s) => `csrf=${csrf}&${s}`),
        fc.constantFrom(`csrf=${csrf}&text=%FF`, `csrf=${csrf}&text=${'y'.repeat(70_000)}`, `${'a=1&'.repeat(120)}`),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('/c/anyone', '/c/named', '/c/missing', '/sign-in', '/sign-out'),
          body,
          fc.constantFrom(
            'application/x-www-form-urlencoded',
            'text/plain',
            'multipart/form-data; boundary=x',
            'application/json',
          ),
          async (path, raw, contentType) => {
            const before = await count();
            const res = await v.post(path, {}, { body: raw, contentType });
            expect([200, 303, 400, 403, 404, 413, 415, 422], `${path} ${contentType} ${raw.slice(0, 80)}`).toContain(
              res.status,
            );
            expect(res.headers.get('content-type') ?? 'text/html').toMatch(/^text\/html/);
            if (res.status !== 303) expect(await count()).toEqual(before);
          },
        ),
        { numRuns: RUNS * 2 },
      );
    } finally {
      await limitless.close();
    }
  }, 600_000);
});
