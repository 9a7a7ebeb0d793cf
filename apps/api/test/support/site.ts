import { loadSeed, type TSeed } from '@convo/db';
import { type DefaultTreeAdapterMap, parse } from 'parse5';
import type { Harness } from './harness.ts';

/*
 * Two accounts with their own hosts, for the conversation-page tests: acme has one conversation for
 * each combination of the two visibility flags, other has one of its own.
 */

export const ACME = 'https://acme.example.com';
export const OTHER = 'https://other.example.com';
export const ACME_TOKEN = 'acme-site-token-0123456789';
export const OTHER_TOKEN = 'other-site-token-0123456789';

const users = [
  { email: 'olivia@acme.example', name: 'Olivia Owner' },
  { email: 'sam@acme.example', name: 'Sam Support' },
];

const conversation = (slug: string, anyone: boolean, search: boolean, title = `Conversation ${slug}`) => ({
  title,
  slug,
  anyone_can_post: anyone,
  allow_search_engines: search,
  created_at: '2024-03-04T05:06:07.123456Z',
  members: ['olivia@acme.example', 'sam@acme.example'],
  tags: ['billing', 'urgent'],
  messages: [
    { author: 'olivia@acme.example', text: `First words of ${slug}`, created_at: '2024-03-04T05:07:00Z' },
    { author: null, text: 'An anonymous reply\nover two lines', created_at: '2024-03-04T06:00:00.5Z' },
    { author: 'sam@acme.example', text: 'Last word', created_at: '2024-03-05T17:21:00Z' },
  ],
});

/** The four combinations of anyone_can_post × allow_search_engines, by slug. */
export const FLAGS = [
  { slug: 'open', anyone: true, search: true },
  { slug: 'quiet', anyone: true, search: false },
  { slug: 'secret', anyone: false, search: true },
  { slug: 'hidden', anyone: false, search: false },
] as const;

export const SITE_SEED: TSeed = {
  accounts: [
    {
      key: 'acme',
      name: 'Acme Support',
      host: ACME,
      owner: 'olivia@acme.example',
      users,
      tokens: [{ name: 'tests', token: ACME_TOKEN }],
      conversations: FLAGS.map((f) => conversation(f.slug, f.anyone, f.search)),
    },
    {
      key: 'other',
      name: 'Other Inc',
      host: OTHER,
      users: [{ email: 'olga@other.example', name: 'Olga Other' }],
      owner: 'olga@other.example',
      tokens: [{ name: 'tests', token: OTHER_TOKEN }],
      conversations: [
        {
          title: 'Theirs',
          slug: 'theirs',
          messages: [{ author: 'olga@other.example', text: 'Only for other' }],
        },
      ],
    },
  ],
};

export const loadSites = async (h: Harness, seed: TSeed = SITE_SEED) => loadSeed(h.db.orm.em.fork(), seed);

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  /** The path asked for. */
  path: string;
}

/** A file as a file input sends it. */
export interface Upload {
  name: string;
  type: string;
  bytes: Uint8Array<ArrayBuffer>;
}

export async function open(h: Harness, url: string, init: RequestInit = {}): Promise<Page> {
  const res = await h.app.fetch(new Request(url, init));
  return { status: res.status, headers: res.headers, html: await res.text(), path: new URL(url).pathname };
}

/**
 * Two answers a visitor cannot tell apart: the same status, body and headers (but the request
 * id), the address each was asked at aside (a page's sign-in link brings the person back to it).
 */
export function fingerprint(p: Page): unknown {
  // The visitor cookie is random, set alike on both: its name and attributes count, not its value.
  const headers = [...p.headers]
    .filter(([name]) => name !== 'x-request-id')
    .map(([name, value]) => [name, name === 'set-cookie' ? value.replace(/=[^;]*/, '=…') : value]);
  return { status: p.status, headers, html: p.html.split(p.path).join('{the path asked for}') };
}

type Node = DefaultTreeAdapterMap['childNode'];
export type Element = DefaultTreeAdapterMap['element'];

/** Every element of an HTML document, as a browser's parser builds them. */
export function elements(html: string): Element[] {
  const out: Element[] = [];
  const walk = (nodes: Node[]) => {
    for (const n of nodes) {
      if ('tagName' in n) {
        out.push(n);
        walk(n.tagName === 'template' ? [] : n.childNodes);
      }
    }
  };
  walk(parse(html).childNodes);
  return out;
}

export const attr = (e: Element, name: string): string | undefined => e.attrs.find((a) => a.name === name)?.value;

/** The text inside an element, as a browser would show it. */
export function textOf(e: Element): string {
  let s = '';
  for (const n of e.childNodes) {
    if (n.nodeName === '#text' && 'value' in n) s += n.value;
    else if ('tagName' in n) s += textOf(n);
  }
  return s;
}

/** The value, or a failure naming what was missing. */
export function present<T>(value: T | null | undefined, what = 'value'): T {
  if (value === null || value === undefined) throw new Error(`expected ${what} to be present`);
  return value;
}

/** The message a reply's 303 leads to (`…#message-<id>`). */
export const messageIdOf = (location: string | null) => Number(/#message-(\d+)$/.exec(location ?? '')?.[1]);

/**
 * A person with a browser: keeps the cookies the site sets, and posts forms as the page wrote them
 * (its CSRF token and form token), from the site's own origin unless told otherwise.
 */
export class Visitor {
  readonly cookies = new Map<string, string>();
  last: Page | null = null;
  private readonly h: Harness;
  private readonly origin: string;

  constructor(h: Harness, origin: string) {
    this.h = h;
    this.origin = origin;
  }

  private remember(res: Response) {
    for (const cookie of res.headers.getSetCookie()) {
      const [pair, ...attrs] = cookie.split(';');
      const [name, value = ''] = (pair ?? '').split('=');
      if (!name) continue;
      const expired = attrs.some((a) => /max-age=0/i.test(a.trim()));
      if (expired || value === '') this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value);
    }
  }

  /** The `cookie` header this browser sends (none before the site set one): for a stream or a fetch of a test's own. */
  cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  async get(path: string): Promise<Page> {
    const res = await this.h.app.fetch(new Request(`${this.origin}${path}`, { headers: this.cookieHeader() }));
    this.remember(res);
    this.last = { status: res.status, headers: res.headers, html: await res.text(), path };
    return this.last;
  }

  /** A hidden field of the last page's first form with that field. */
  hidden(name: string): string {
    const input = elements(this.last?.html ?? '').find((e) => e.tagName === 'input' && attr(e, 'name') === name);
    return present(input && attr(input, 'value'), `hidden field ${name}`);
  }

  async post(
    path: string,
    fields: Record<string, string>,
    o: { origin?: string | null; body?: string; contentType?: string } = {},
  ): Promise<Page> {
    const origin = o.origin === undefined ? this.origin : o.origin;
    const res = await this.h.app.fetch(
      new Request(`${this.origin}${path}`, {
        method: 'POST',
        headers: {
          ...this.cookieHeader(),
          'content-type': o.contentType ?? 'application/x-www-form-urlencoded',
          ...(origin ? { origin } : {}),
        },
        body: o.body ?? new URLSearchParams(fields).toString(),
      }),
    );
    this.remember(res);
    this.last = { status: res.status, headers: res.headers, html: await res.text(), path };
    return this.last;
  }

  /**
   * Posts a form as multipart/form-data, as a browser sends one with a file input: the fields,
   * then the file (if any) in `media`.
   */
  async postMultipart(path: string, fields: Record<string, string>, file?: Upload): Promise<Page> {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    if (file) body.append('media', new Blob([file.bytes], { type: file.type }), file.name);
    // Encoded first, as a browser has the bytes it sends (a FormData body streamed in process
    // trips over a server that stops reading it, as one refused before its file does).
    const encoded = new Response(body);
    const res = await this.h.app.fetch(
      new Request(`${this.origin}${path}`, {
        method: 'POST',
        headers: {
          ...this.cookieHeader(),
          origin: this.origin,
          'content-type': encoded.headers.get('content-type') ?? 'multipart/form-data',
        },
        body: await encoded.arrayBuffer(),
      }),
    );
    this.remember(res);
    this.last = { status: res.status, headers: res.headers, html: await res.text(), path };
    return this.last;
  }

  /** Opens a conversation page and posts its reply form with a recording, as multipart. */
  async replyWithRecording(slug: string, fields: Record<string, string>, file?: Upload): Promise<Page> {
    await this.get(`/c/${slug}`);
    return this.postMultipart(
      `/c/${slug}`,
      { csrf: this.hidden('csrf'), submit: this.hidden('submit'), ...fields },
      file,
    );
  }

  /**
   * Opens a mailed link as a person does: the page it shows (which changes nothing), then its one
   * button (a POST with this device's CSRF token), with the name a new person gives there.
   */
  async confirm(link: string, fields: Record<string, string> = {}): Promise<Page> {
    const path = new URL(link, this.origin).pathname;
    const opened = await this.get(path);
    if (opened.status !== 200) return opened;
    return this.post(path, { csrf: this.hidden('csrf'), ...fields });
  }

  /** Opens a conversation page and posts its reply form with these fields. */
  async reply(slug: string, fields: Record<string, string>): Promise<Page> {
    await this.get(`/c/${slug}`);
    return this.post(`/c/${slug}`, { csrf: this.hidden('csrf'), submit: this.hidden('submit'), ...fields });
  }
}
