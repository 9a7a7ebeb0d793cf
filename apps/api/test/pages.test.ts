import { robotsFile } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Harness, openHarness } from './support/harness.ts';
import {
  ACME,
  ACME_TOKEN,
  attr,
  elements,
  FLAGS,
  fingerprint,
  loadSites,
  OTHER,
  OTHER_TOKEN,
  open,
  present,
  textOf,
} from './support/site.ts';
import { awayFromWindowEnd } from './support/windows.ts';

let h: Harness;
/** acme's conversations as the API shows them, by slug. */
const api = new Map<string, any>();
let theirs: any;

const apiGet = async (token: string, slug: string) =>
  (
    await call(
      h,
      new Request(`http://api.test/api/v1/conversations/get_conversation?slug=${slug}`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    )
  ).body;

beforeAll(async () => {
  h = await openHarness();
  await loadSites(h);
  for (const { slug } of FLAGS) api.set(slug, await apiGet(ACME_TOKEN, slug));
  theirs = await apiGet(OTHER_TOKEN, 'theirs');
});
afterAll(async () => h?.close());

const headings = (html: string) =>
  elements(html)
    .filter((e) => e.tagName === 'h1')
    .map(textOf);

describe('routing by the account host', () => {
  it('opens the conversation_url the API hands out, with every message at its message_url anchor', async () => {
    const c = api.get('open');
    expect(c.conversation_url).toBe(`${ACME}/c/open`);
    const page = await open(h, c.conversation_url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/i);
    const els = elements(page.html);
    expect(headings(page.html)).toEqual([c.title]);
    expect(textOf(present(els.find((e) => e.tagName === 'title')))).toBe(`${c.title} · Acme Support`);
    // Tags, members (names, never e-mail addresses), messages oldest first with author and time.
    expect(els.filter((e) => attr(e, 'class') === 'tags').flatMap((e) => textOf(e))).toEqual(['billingurgent']);
    const members = present(els.find((e) => attr(e, 'class') === 'members'));
    expect(textOf(members)).toBe('Olivia OwnerSam Support');
    expect(page.html).not.toContain('@acme.example');
    const messages = els.filter((e) => attr(e, 'class') === 'message');
    expect(messages.map((e) => attr(e, 'id'))).toEqual(c.messages.map((m: any) => `message-${m.id}`));
    for (const m of c.messages) expect(m.message_url).toBe(`${c.conversation_url}#message-${m.id}`);
    expect(
      messages.map((e) =>
        textOf(present(e.childNodes.find((n): n is typeof e => 'tagName' in n && n.tagName === 'header'))),
      ),
    ).toEqual([
      'Olivia Owner Acme Support teamMarch 4th, 2024 05:07AM UTC',
      'AnonymousMarch 4th, 2024 06:00AM UTC',
      'Sam SupportMarch 5th, 2024 05:21PM UTC',
    ]);
    const times = els.filter((e) => e.tagName === 'time').map((e) => attr(e, 'datetime'));
    expect(times).toEqual([
      '2024-03-04T05:06:07.123456Z',
      '2024-03-04T05:07:00.000000Z',
      '2024-03-04T06:00:00.500000Z',
      '2024-03-05T17:21:00.000000Z',
    ]);
    expect(page.html).toContain('An anonymous reply\nover two lines');
  });

  it('matches slugs ignoring case, and names the stored one as canonical', async () => {
    const page = await open(h, `${ACME}/c/OPEN`);
    expect(page.status).toBe(200);
    const canonical = elements(page.html).find((e) => e.tagName === 'link' && attr(e, 'rel') === 'canonical');
    expect(attr(present(canonical), 'href')).toBe(`${ACME}/c/open`);
  });

  it('answers a page request to no account host as the API does today, and the API on an account host', async () => {
    const elsewhere = await call(h, new Request('http://api.test/c/open'));
    expect(elsewhere).toMatchObject({ status: 404, body: { code: 'route_not_found' } });
    const viaAccountHost = await call(
      h,
      new Request(`${ACME}/api/v1/conversations/get_conversation?slug=open`, {
        headers: { authorization: `Bearer ${ACME_TOKEN}` },
      }),
    );
    expect(viaAccountHost.body.slug).toBe('open');
    const missingApi = await call(h, new Request(`${ACME}/api/v1/nope`));
    expect(missingApi).toMatchObject({ status: 404, body: { code: 'route_not_found' } });
  });

  it('answers / with a landing page of the account that offers to sign in and come back', async () => {
    const home = await open(h, `${ACME}/`);
    expect(home.status).toBe(200);
    expect(headings(home.html)).toEqual(['Acme Support']);
    const links = elements(home.html).filter((e) => e.tagName === 'a' && textOf(e) === 'Sign in');
    expect(links.map((a) => attr(a, 'href'))).toContain('/sign-in?return=/');
  });

  it('answers other paths of an account host with the HTML 404 page', async () => {
    for (const path of ['/c/', '/c/open/', '/nope', '/embeds/conversations/acme', '/assets/nope.css']) {
      const page = await open(h, `${ACME}${path}`);
      expect(page.status, path).toBe(404);
      expect(page.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(headings(page.html), path).toEqual(['Page not found']);
      // It leads somewhere: the site's home (the site name too) and signing in.
      const hrefs = elements(page.html)
        .filter((e) => e.tagName === 'a')
        .map((a) => attr(a, 'href'));
      expect(hrefs.filter((href) => href === '/').length, path).toBe(2);
      expect(hrefs, path).toContain('/sign-in');
    }
  });

  it('matches the host with or without the default port, and any port an account names', async () => {
    expect((await open(h, 'https://acme.example.com:443/c/open')).status).toBe(200);
    expect((await open(h, 'https://ACME.example.com/c/open')).status).toBe(200);
    expect((await open(h, 'https://acme.example.com:8443/c/open')).status).toBe(404);
  });

  it('believes X-Forwarded-Host and -Proto only with TRUST_PROXY', async () => {
    const forwarded = { 'x-forwarded-host': 'acme.example.com', 'x-forwarded-proto': 'https' };
    const direct = await open(h, 'http://10.0.0.5:3000/c/open', { headers: forwarded });
    expect(direct.status).toBe(404);
    const { secondApp } = await import('./support/harness.ts');
    const proxied = secondApp(h, {}, { http: { proxies: { hops: 1 } } });
    const res = await proxied.fetch(new Request('http://10.0.0.5:3000/c/open', { headers: forwarded }));
    expect(res.status).toBe(200);
    // A trusted proxy's scheme counts: acme's host is https, so a plain-http request is not acme's.
    const plain = await proxied.fetch(
      new Request('http://10.0.0.5:3000/c/open', { headers: { ...forwarded, 'x-forwarded-proto': 'http' } }),
    );
    expect(plain.status).toBe(404);
  });
});

describe('isolation between account hosts', () => {
  it("answers another account's slug, embed key and message id exactly as missing ones", async () => {
    const missing = fingerprint(await open(h, `${ACME}/c/no-such-slug`));
    expect(fingerprint(await open(h, `${ACME}/c/theirs`))).toEqual(missing);
    const message = theirs.messages[0];
    expect(message.embed_message_url).toBe(`${OTHER}/embeds/messages/other/${message.id}&show_author=true`);
    expect((await open(h, message.embed_message_url)).status).toBe(200);
    const mine = fingerprint(await open(h, `${ACME}/embeds/messages/acme/${message.id}&show_author=true`));
    expect(mine).toEqual(fingerprint(await open(h, `${ACME}/embeds/messages/acme/999999&show_author=true`)));
    const wrongKey = fingerprint(await open(h, `${ACME}/embeds/conversations/other/open`));
    expect(wrongKey).toEqual(fingerprint(await open(h, `${ACME}/embeds/conversations/acme/no-such-slug`)));
    expect((await open(h, `${OTHER}/c/open`)).status).toBe(404);
  });
});

describe('who may see it, and what search engines are told', () => {
  it.each(FLAGS)('$slug: anyone_can_post $anyone, allow_search_engines $search', async (f) => {
    const c = api.get(f.slug);
    const m = c.messages[0];
    // A message's number can be counted: an unlisted public conversation's is reached by it only
    // with the conversation's slug, the one key to it.
    const unlisted = f.anyone && !f.search;
    const urls = [
      c.conversation_url,
      c.conversation_embed_url,
      unlisted ? `${m.embed_message_url}?c=${f.slug}` : m.embed_message_url,
    ];
    expect(c.conversation_embed_url).toBe(`${ACME}/embeds/conversations/acme/${f.slug}`);
    if (unlisted) {
      const counted = await open(h, m.embed_message_url);
      const missing = await open(h, `${ACME}/embeds/messages/acme/999999&show_author=true`);
      expect(fingerprint(counted)).toEqual(fingerprint(missing));
      expect(counted.html).not.toContain(c.title);
    }
    const pages = await Promise.all(urls.map((u: string) => open(h, u)));
    if (!f.anyone) {
      // Private: the same answer as a conversation that does not exist, on all three addresses.
      const missing = await Promise.all(
        [
          `${ACME}/c/zz-missing`,
          `${ACME}/embeds/conversations/acme/zz-missing`,
          `${ACME}/embeds/messages/acme/999999`,
        ].map((u) => open(h, u)),
      );
      expect(pages.map(fingerprint)).toEqual(missing.map(fingerprint));
      expect(pages.map((p) => p.html).join('')).not.toContain(c.title);
      return;
    }
    for (const p of pages) {
      expect(p.status).toBe(200);
      const meta = elements(p.html).find((e) => e.tagName === 'meta' && attr(e, 'name') === 'robots');
      if (f.search) {
        expect(p.headers.get('x-robots-tag')).toBeNull();
        expect(meta).toBeUndefined();
      } else {
        expect(p.headers.get('x-robots-tag')).toBe('noindex');
        expect(attr(present(meta), 'content')).toBe('noindex');
      }
    }
    const og = elements(present(pages[0]).html).filter((e) => attr(e, 'property')?.startsWith('og:'));
    expect(Object.fromEntries(og.map((e) => [attr(e, 'property'), attr(e, 'content')]))).toEqual({
      'og:type': 'article',
      'og:title': c.title,
      'og:description': `First words of ${f.slug}`,
      'og:url': c.conversation_url,
      'og:site_name': 'Acme Support',
    });
  });

  it('robots.txt disallows pages and embeds, and allows by name only what may be indexed', async () => {
    const robots = await open(h, `${ACME}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(robots.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(robots.html).toBe(
      [
        'User-agent: *',
        'Disallow: /c/',
        'Disallow: /embeds/',
        'Allow: /c/open$',
        '',
        `Sitemap: ${ACME}/sitemap.xml`,
        '',
      ].join('\n'),
    );
    for (const slug of ['quiet', 'secret', 'hidden']) expect(robots.html).not.toContain(slug);
    const index = await open(h, `${ACME}/sitemap.xml`);
    expect(index.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(index.html).toContain('<sitemapindex');
    expect(index.html.match(/<loc>[^<]*<\/loc>/g)).toEqual([`<loc>${ACME}/sitemap-1.xml</loc>`]);
    const sitemap = await open(h, `${ACME}/sitemap-1.xml`);
    expect(sitemap.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(sitemap.html.match(/<loc>[^<]*<\/loc>/g)).toEqual([`<loc>${ACME}/c/open</loc>`]);
    expect((await open(h, `${ACME}/sitemap-2.xml`)).status).toBe(404);
    // What a crawler obeying the file may fetch: the indexable page, and nothing else of acme's.
    const allowed = (path: string) => {
      const rules = robots.html
        .split('\n')
        .map((l) => /^(Allow|Disallow): (.*)$/.exec(l))
        .filter((r): r is RegExpExecArray => r !== null)
        .map(([, kind, pattern]) => ({ kind, pattern: pattern ?? '' }))
        .filter(({ pattern }) => (pattern.endsWith('$') ? path === pattern.slice(0, -1) : path.startsWith(pattern)))
        .sort((a, b) => b.pattern.length - a.pattern.length);
      return rules.length === 0 || rules[0]?.kind === 'Allow';
    };
    expect(FLAGS.filter((f) => allowed(`/c/${f.slug}`)).map((f) => f.slug)).toEqual(['open']);
    expect(allowed('/embeds/conversations/acme/open')).toBe(false);
    expect(allowed('/c/open-plus')).toBe(false);
    // robots.txt of another account's host names only its own conversations.
    expect((await open(h, `${OTHER}/robots.txt`)).html).toContain('Allow: /c/theirs$');
  });

  it('keeps robots.txt under the size crawlers read, newest conversations first', async () => {
    const em = h.db.orm.em.fork();
    const { PgSiteStore } = await import('@convo/db');
    const site = new PgSiteStore(em);
    const account = present(await site.accountByHost([ACME]));
    const { createJson } = await import('./support/harness.ts');
    for (let i = 0; i < 40; i++) await createJson(h, ACME_TOKEN, { title: `Many ${i}`, slug: `many-${i}` });
    const small = await robotsFile({ site }, account, 300);
    expect(Buffer.byteLength(small)).toBeLessThanOrEqual(300);
    const allows = small.split('\n').filter((l) => l.startsWith('Allow:'));
    expect(allows.length).toBeGreaterThan(3);
    expect(allows[0]).toBe('Allow: /c/many-39$');
    expect(small).toContain('Disallow: /c/');
  });
});

describe('the embeds', () => {
  it('render the conversation without site chrome, framable by any site', async () => {
    const c = api.get('open');
    const embed = await open(h, c.conversation_embed_url);
    const page = await open(h, c.conversation_url);
    expect(embed.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(embed.headers.get('x-frame-options')).toBeNull();
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    expect(page.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    const tags = (html: string) => new Set(elements(html).map((e) => attr(e, 'class')));
    expect(tags(page.html).has('site-header')).toBe(true);
    expect(tags(embed.html).has('site-header')).toBe(false);
    expect(headings(embed.html)).toEqual([c.title]);
    expect(elements(embed.html).filter((e) => attr(e, 'class') === 'message')).toHaveLength(3);
    // A way to answer: the conversation's page at its form, opened outside the frame.
    const reply = present(elements(embed.html).find((e) => e.tagName === 'a' && textOf(e).startsWith('Reply on')));
    expect([attr(reply, 'href'), attr(reply, 'target')]).toEqual([`${c.conversation_url}#reply`, '_blank']);
  });

  it('show one message, and its author only when show_author=true', async () => {
    const m = api.get('open').messages[0];
    const withAuthor = await open(h, m.embed_message_url);
    expect(withAuthor.status).toBe(200);
    expect(withAuthor.html).toContain('Olivia Owner');
    expect(withAuthor.html).toContain('First words of open');
    expect(withAuthor.html).not.toContain('Last word');
    const base = `${ACME}/embeds/messages/acme/${m.id}`;
    for (const [url, shown] of [
      [base, false],
      [`${base}&show_author=false`, false],
      [`${base}?show_author=true`, true],
      [`${base}?show_author=1`, false],
    ] as const) {
      const p = await open(h, url);
      expect(p.status, url).toBe(200);
      expect(p.html.includes('Olivia Owner'), url).toBe(shown);
    }
    for (const bad of [
      `${base}&show_author`,
      `${base}&x=1`,
      `${ACME}/embeds/messages/acme/0`,
      `${ACME}/embeds/messages/acme/99999999999`,
    ]) {
      expect((await open(h, bad)).status, bad).toBe(404);
    }
  });
});

describe('headers and methods', () => {
  it('sends a strict policy (script of its own origin only), no sniffing and no referrer on every page, the 404 included', async () => {
    for (const url of [`${ACME}/c/open`, `${ACME}/c/missing`, `${ACME}/embeds/conversations/acme/open`]) {
      const p = await open(h, url);
      const csp = p.headers.get('content-security-policy') ?? '';
      expect(csp, url).toContain("default-src 'none'");
      expect(csp, url).toContain("style-src 'self'");
      // Script only from the site itself (its one file): nothing inline, nothing from elsewhere.
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(p.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(p.headers.get('referrer-policy'), url).toBe('same-origin');
    }
    // Pages carry a form token bound to the visitor: private, revalidated.
    expect((await open(h, `${ACME}/c/open`)).headers.get('cache-control')).toBe('private, no-cache');
    expect((await open(h, `${ACME}/c/missing`)).headers.get('cache-control')).toBe('no-store');
  });

  it('serves its stylesheet from this host, cached for a year under a content hash', async () => {
    const page = await open(h, `${ACME}/c/open`);
    const href = present(attr(present(elements(page.html).find((e) => attr(e, 'rel') === 'stylesheet')), 'href'));
    expect(href).toMatch(/^\/assets\/site-[0-9a-f]{12}\.css$/);
    const css = await open(h, `${ACME}${href}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers HEAD like GET without a body, and other methods with 405', async () => {
    const head = await h.app.fetch(new Request(`${ACME}/c/open`, { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await open(h, `${ACME}/c/open`, { method: 'DELETE' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toMatch(/GET/);
    expect(post.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('reads a page in a constant number of statements, whatever it holds', async () => {
    h.statements.length = 0;
    await open(h, `${ACME}/c/open`);
    const page = h.statements.length;
    h.statements.length = 0;
    await open(h, `${ACME}/c/many-3`);
    // The account by host (remembered for a few seconds), and the page in one statement.
    expect(page).toBeLessThanOrEqual(2);
    expect(h.statements.length).toBe(page);
  });
});

describe('a long conversation', () => {
  const host = 'https://long.example.com';
  const COUNT = 250;
  const ids: number[] = [];

  beforeAll(async () => {
    const { loadSeed } = await import('@convo/db');
    await loadSeed(h.db.orm.em.fork(), {
      accounts: [
        {
          key: 'long',
          name: 'Long',
          host,
          users: [{ email: 'm@long.example', name: 'Member' }],
          conversations: [
            {
              slug: 'long',
              title: 'Long',
              messages: Array.from({ length: COUNT }, (_, i) => ({
                author: null,
                text: `Message number ${i + 1}`,
                created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
              })),
            },
            {
              slug: 'long-private',
              title: 'Long private',
              anyone_can_post: false,
              members: ['m@long.example'],
              messages: Array.from({ length: COUNT }, (_, i) => ({ author: null, text: `Private ${i}` })),
            },
          ],
        },
      ],
    });
    const rows = await h.db.orm.em
      .fork()
      .getConnection()
      .execute(
        "select m.id from message m join conversation c on c.id = m.conversation_id where c.slug = 'long' order by m.created_at, m.id",
      );
    ids.push(...rows.map((r: { id: number }) => r.id));
  });

  const texts = (html: string) =>
    elements(html)
      .filter((e) => attr(e, 'class') === 'text')
      .map(textOf);
  const link = (html: string, label: string) =>
    elements(html)
      .filter((e) => e.tagName === 'a' && textOf(e) === label)
      .map((e) => attr(e, 'href'))[0];

  it('shows the latest 100 messages, with links to the earlier pages', async () => {
    const latest = await open(h, `${host}/c/long`);
    expect(latest.status).toBe(200);
    expect(texts(latest.html)).toEqual(Array.from({ length: 100 }, (_, i) => `Message number ${i + 151}`));
    expect(latest.html).toContain('Messages 151–250 of 250 (the latest)');
    expect(link(latest.html, 'Earlier messages')).toBe('/c/long?page=2');
    const two = await open(h, `${host}/c/long?page=2`);
    expect(texts(two.html)).toEqual(Array.from({ length: 100 }, (_, i) => `Message number ${i + 101}`));
    expect(link(two.html, 'Earlier messages')).toBe('/c/long?page=1');
    expect(link(two.html, 'Later messages')).toBe('/c/long?page=3');
    expect(link(two.html, 'Latest messages')).toBe('/c/long');
    const one = await open(h, `${host}/c/long?page=1`);
    expect(texts(one.html)[0]).toBe('Message number 1');
    expect(link(one.html, 'Earlier messages')).toBeUndefined();
    const three = await open(h, `${host}/c/long?page=3`);
    expect(texts(three.html)).toHaveLength(50);
    // No page past the last, and nothing that is not a page number.
    for (const page of ['4', '0', '-1', 'x', '1.5', '99999999999']) {
      expect((await open(h, `${host}/c/long?page=${page}`)).status, page).toBe(404);
    }
  });

  it("lands every message_url on the latest page: an earlier message's anchor leads to its page", async () => {
    const latest = await open(h, `${host}/c/long`);
    const els = elements(latest.html);
    for (const [position, id] of ids.entries()) {
      const target = els.find((e) => attr(e, 'id') === `message-${id}`);
      expect(target, `message ${position + 1}`).toBeDefined();
      if (position < 150) {
        const a = present(target).childNodes.find((n) => 'tagName' in n && n.tagName === 'a');
        expect(a && 'attrs' in a ? attr(a, 'href') : null).toBe(
          `/c/long?page=${Math.floor(position / 100) + 1}#message-${id}`,
        );
      }
    }
    // ... and the page it points to holds the message itself.
    const one = await open(h, `${host}/c/long?page=1`);
    expect(elements(one.html).find((e) => attr(e, 'id') === `message-${ids[0]}`)?.tagName).toBe('article');
  });

  it('answers a private conversation, however long, in the statements a missing slug costs', async () => {
    const count = async (path: string) => {
      await open(h, `${host}${path}`); // the host is remembered after the first request
      h.statements.length = 0;
      const page = await open(h, `${host}${path}`);
      return { statements: h.statements.length, page };
    };
    const missing = await count('/c/no-such-conversation');
    const hidden = await count('/c/long-private');
    expect(hidden.statements).toBe(missing.statements);
    // The statement text is Kysely's (quoted names) or hand-written (bare): either reads the table.
    expect(h.statements.some((s) => /from "?message"?[\s)]/.test(s))).toBe(false);
    expect(fingerprint(hidden.page)).toEqual(fingerprint(missing.page));
    expect((await open(h, `${host}/c/long-private?page=2`)).status).toBe(404);
  });
});

describe('files for crawlers', () => {
  const host = 'https://crawled.example.com';
  let token = '';

  beforeAll(async () => {
    const { loadSeed } = await import('@convo/db');
    token = 'crawled-token-0123456789';
    await loadSeed(h.db.orm.em.fork(), {
      accounts: [{ key: 'crawled', name: 'Crawled', host, tokens: [{ name: 't', token }], conversations: [] }],
    });
  });

  it('makes robots.txt and the sitemaps once per change of the account, with ETags and 304', async () => {
    const { createJson } = await import('./support/harness.ts');
    await createJson(h, token, { title: 'First', slug: 'first' });
    for (const path of ['/robots.txt', '/sitemap.xml', '/sitemap-1.xml']) {
      const first = await open(h, `${host}${path}`);
      expect(first.status, path).toBe(200);
      const etag = present(first.headers.get('etag'));
      h.statements.length = 0;
      const again = await open(h, `${host}${path}`);
      // The change mark alone is read; the file is not made again.
      expect(
        h.statements.filter((s) => !s.includes('visitor_rate_limit')),
        path,
      ).toHaveLength(1);
      expect(again.html).toBe(first.html);
      const cached = await open(h, `${host}${path}`, { headers: { 'if-none-match': etag } });
      expect(cached.status, path).toBe(304);
      expect(cached.html).toBe('');
    }
    const before = await open(h, `${host}/sitemap-1.xml`);
    await createJson(h, token, { title: 'Second', slug: 'second' });
    const after = await open(h, `${host}/sitemap-1.xml`);
    expect(after.html).toContain(`${host}/c/second`);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    expect(
      (await open(h, `${host}/sitemap-1.xml`, { headers: { 'if-none-match': present(before.headers.get('etag')) } }))
        .status,
    ).toBe(200);
    expect((await open(h, `${host}/robots.txt`)).html).toContain('Allow: /c/second$');
    // Public answers set no visitor cookie (a shared cache would hand it to everyone).
    for (const path of ['/robots.txt', '/sitemap.xml', '/sitemap-1.xml']) {
      expect((await open(h, `${host}${path}`)).headers.getSetCookie(), path).toEqual([]);
    }
  });

  it('splits the sitemap into files of at most 50,000 addresses', async () => {
    const conn = h.db.orm.em.fork().getConnection();
    const [account] = await conn.execute("select id from account where key = 'crawled'");
    await conn.execute(
      `insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines, created_at)
       select ?, 'Bulk ' || i, 'bulk ' || i, 'bulk-' || i, true, true, true, timestamptz '2020-01-01' + make_interval(secs => i)
       from generate_series(1, 50001) i`,
      [account.id],
    );
    // Written behind the API's back: the change mark is raised as any write of the API raises it.
    await conn.execute(
      'insert into account_change (account_id, shard, seq) values (?, 0, 1) on conflict (account_id, shard) do update set seq = account_change.seq + 1',
      [account.id],
    );
    const index = await open(h, `${host}/sitemap.xml`);
    expect(index.html.match(/<loc>[^<]*<\/loc>/g)).toEqual([
      `<loc>${host}/sitemap-1.xml</loc>`,
      `<loc>${host}/sitemap-2.xml</loc>`,
    ]);
    const one = await open(h, `${host}/sitemap-1.xml`);
    const two = await open(h, `${host}/sitemap-2.xml`);
    expect(one.html.match(/<loc>/g)).toHaveLength(50_000);
    // Oldest first: the first file starts with the oldest, the second holds the rest.
    expect(one.html).toContain(`<loc>${host}/c/bulk-1</loc>`);
    expect(two.html.match(/<loc>[^<]*<\/loc>/g)).toEqual([
      `<loc>${host}/c/bulk-50001</loc>`,
      `<loc>${host}/c/first</loc>`,
      `<loc>${host}/c/second</loc>`,
    ]);
    expect((await open(h, `${host}/sitemap-3.xml`)).status).toBe(404);
  });
});

describe('page reads per client address', () => {
  it('refuses a client past the limit with 429 and Retry-After, across processes; others and assets go on', async () => {
    const { secondApp } = await import('./support/harness.ts');
    const limits = { site: { limits: { readsPerIpPerMinute: 60 } } };
    const a = secondApp(h, {}, limits);
    const b = secondApp(h, {}, limits);
    const read = (app: typeof a, ip: string, path = '/c/open') =>
      app.fetch(new Request(`${ACME}${path}`), { clientIp: ip });
    await awayFromWindowEnd();
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) statuses.push((await read(i % 2 ? a : b, '192.0.2.7')).status);
    // Two processes share one quota: 60 served in all, then refused.
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual(Array(10).fill(429));
    const refused = await read(a, '192.0.2.7');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.text()).toContain('Too many');
    expect((await read(a, '192.0.2.8')).status).toBe(200);
    const stylesheet = /href="(\/assets\/[^"]+)"/.exec(await (await read(b, '192.0.2.8')).text())?.[1];
    expect((await read(a, '192.0.2.7', present(stylesheet))).status).toBe(200);
    // 0 turns it off.
    const off = secondApp(h, {}, { site: { limits: { readsPerIpPerMinute: 0 } } });
    for (let i = 0; i < 5; i++) expect((await read(off, '192.0.2.7')).status).toBe(200);
  });
});

describe('the visitor cookie', () => {
  it('is set only by HTML pages that carry a form, never on answers a shared cache may keep', async () => {
    const cookies = async (path: string) => (await open(h, `${ACME}${path}`)).headers.getSetCookie();
    expect(await cookies('/c/open')).toEqual([expect.stringMatching(/^convo_visitor=/)]);
    expect(await cookies('/sign-in')).toEqual([expect.stringMatching(/^convo_visitor=/)]);
    const page = await open(h, `${ACME}/c/open`);
    const stylesheet = present(/href="(\/assets\/[^"]+)"/.exec(page.html)?.[1]);
    for (const path of [
      stylesheet,
      '/robots.txt',
      '/sitemap.xml',
      '/no-such-page',
      '/embeds/conversations/acme/open',
    ]) {
      expect(await cookies(path), path).toEqual([]);
    }
  });

  it("keeps a private conversation's embed out of every cache, as its page", async () => {
    const { loadSeed } = await import('@convo/db');
    await loadSeed(h.db.orm.em.fork(), {
      accounts: [
        {
          key: 'embedded',
          name: 'Embedded',
          host: 'https://embedded.example.com',
          users: [{ email: 'e@embedded.example', name: 'E' }],
          conversations: [
            { slug: 'private', title: 'Private', anyone_can_post: false, members: ['e@embedded.example'] },
          ],
        },
      ],
    });
    const conn = h.db.orm.em.fork().getConnection();
    const [user] = await conn.execute("select id, account_id from account_user where email = 'e@embedded.example'");
    const token = 'y'.repeat(43);
    const { hashToken: sha256 } = await import('@convo/db');
    await conn.execute(
      "insert into site_session (account_id, user_id, token_hash, expires_at) values (?, ?, ?, now() + interval '1 day')",
      [user.account_id, user.id, sha256(token)],
    );
    const embed = await open(h, 'https://embedded.example.com/embeds/conversations/embedded/private', {
      headers: { cookie: `convo_session=${token}` },
    });
    expect(embed.status).toBe(200);
    expect(embed.headers.get('cache-control')).toBe('no-store');
  });
});
