import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Harness } from './support/harness.ts';
import { openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { attr, type Element, elements, present, textOf, Visitor } from './support/site.ts';

/*
 * The team's inbox at `/`: latest activity first, 50 a page, unread marks per team member, a tag
 * filter and a title search, what each member may see, and a constant number of statements a page.
 */

const HOST = 'https://desk.example.com';

const day = (n: number) => new Date(Date.UTC(2025, 0, 1 + n)).toISOString();

let site: PeopleSite;
let h: Harness;

beforeAll(async () => {
  site = await openPeopleSite(
    {
      accounts: [
        {
          key: 'desk',
          name: 'Desk',
          host: HOST,
          owner: 'olivia@desk.example',
          users: [
            { email: 'olivia@desk.example', name: 'Olivia Owner' },
            { email: 'tom@desk.example', name: 'Tom Teammate', team: 'member' },
            { email: 'paul@else.example', name: 'Paul Participant' },
          ],
          tags: ['billing', 'Urgent'],
          conversations: [
            ...Array.from({ length: 60 }, (_, i) => ({
              title: `Question ${i}`,
              slug: `q-${i}`,
              created_at: day(i),
              tags: i % 10 === 0 ? ['billing'] : [],
              // The newest message, not the creation, says how recent it is: q-5 was answered last.
              messages: i === 5 ? [{ author: null, text: 'Late answer', created_at: day(100) }] : [],
            })),
            {
              title: 'Secret plans',
              slug: 'secret',
              anyone_can_post: false,
              created_at: day(90),
              members: ['olivia@desk.example'],
              tags: ['Urgent'],
            },
          ],
        },
      ],
    },
    {},
    60_000,
  );
  h = site.h;
});
afterAll(async () => site?.close());

const signedIn = (email: string) => signIn(site, HOST, email);

interface Row {
  slug: string;
  unread: boolean;
}

/** The inbox's rows, in order: each conversation's slug and whether it is marked unread. */
const rows = (html: string): Row[] =>
  elements(html)
    .filter((e) => e.tagName === 'li' && ['unread', 'read'].includes(attr(e, 'class') ?? ''))
    .map((li) => ({ slug: present(firstLink(li)).replace('/c/', ''), unread: attr(li, 'class') === 'unread' }));

function firstLink(node: Element): string | undefined {
  for (const child of node.childNodes) {
    if (!('tagName' in child)) continue;
    if (child.tagName === 'a') return attr(child, 'href');
    const found = firstLink(child);
    if (found) return found;
  }
  return undefined;
}

describe('the inbox at /', () => {
  it('refuses a NUL or bytes that are not UTF-8 in the address or a form with a 400, never a 500', async () => {
    const olivia = await signedIn('olivia@desk.example');
    const stranger = new Visitor(h, HOST);
    for (const path of ['/?q=a%00b', '/?tag=%00', '/?page=%00', '/?q=%ED%A0%80', '/?q=%FF', '/sign-in?return=%00']) {
      for (const v of [olivia, stranger]) {
        const res = await v.get(path);
        expect(res.status, path).toBe(400);
        expect(res.html, path).toContain('no text here may hold');
      }
    }
    // Forms anyone can send: sign-in (an address with a NUL), a reply's name.
    await stranger.get('/sign-in');
    const signIn = await stranger.post('/sign-in', { csrf: stranger.hidden('csrf'), email: 'a\u0000@desk.example' });
    expect(signIn.status).toBe(400);
    expect(signIn.html).toContain('NUL');
    // The inbox still answers.
    expect((await olivia.get('/?q=Question')).status).toBe(200);
  });

  it('is a landing page for anyone not on the team', async () => {
    for (const v of [new Visitor(h, HOST), await signedIn('paul@else.example')]) {
      const page = await v.get('/');
      expect(page.status).toBe(200);
      expect(rows(page.html)).toEqual([]);
      expect(page.html).not.toContain('Question 1');
    }
  });

  it('lists the latest activity first, 50 a page, unread where someone wrote; a bad page is a 404', async () => {
    const olivia = await signedIn('olivia@desk.example');
    const first = rows((await olivia.get('/')).html);
    expect(first).toHaveLength(50);
    expect(first.slice(0, 4).map((r) => r.slug)).toEqual(['q-5', 'secret', 'q-59', 'q-58']);
    // Never opened: unread only where someone wrote; an empty conversation is no news.
    expect(first.filter((r) => r.unread).map((r) => r.slug)).toEqual(['q-5']);
    const second = rows((await olivia.get('/?page=2')).html);
    expect(second.map((r) => r.slug)).toEqual(
      Array.from({ length: 12 }, (_, i) => `q-${11 - i}`).filter((s) => s !== 'q-5'),
    );
    expect((await olivia.get('/?page=2')).html).toContain('href="/"');
    for (const bad of ['0', 'two', '3.5', '-1']) expect((await olivia.get(`/?page=${bad}`)).status).toBe(404);
  });

  it('marks a conversation read once opened, and unread again when someone writes', async () => {
    const olivia = await signedIn('olivia@desk.example');
    expect((await olivia.get('/c/q-5')).status).toBe(200);
    const after = rows((await olivia.get('/')).html);
    expect(after.find((r) => r.slug === 'q-5')?.unread).toBe(false);
    expect(after.find((r) => r.slug === 'q-59')?.unread).toBe(false);
    // Tom's marks are his own.
    const tom = await signedIn('tom@desk.example');
    expect(rows((await tom.get('/')).html).find((r) => r.slug === 'q-5')?.unread).toBe(true);
    // A new message: on top, and unread for Olivia again.
    expect((await new Visitor(h, HOST).reply('q-59', { text: 'Another question' })).status).toBe(303);
    const moved = rows((await olivia.get('/')).html);
    expect(moved[0]).toEqual({ slug: 'q-59', unread: true });
  });

  it('filters by tag (ignoring case) and searches titles', async () => {
    const olivia = await signedIn('olivia@desk.example');
    const billing = rows((await olivia.get('/?tag=BILLING')).html).map((r) => r.slug);
    expect(billing.sort()).toEqual(['q-0', 'q-10', 'q-20', 'q-30', 'q-40', 'q-50']);
    expect(
      rows((await olivia.get('/?q=question%205')).html)
        .map((r) => r.slug)
        .sort(),
    ).toEqual(['q-5', 'q-50', 'q-51', 'q-52', 'q-53', 'q-54', 'q-55', 'q-56', 'q-57', 'q-58', 'q-59'].sort());
    // What was said is searched too: q-5's answer says "Late answer", its title does not.
    expect(rows((await olivia.get('/?q=LATE')).html).map((r) => r.slug)).toEqual(['q-5']);
    expect(rows((await olivia.get('/?q=late%20answer')).html).map((r) => r.slug)).toEqual(['q-5']);
    const none = await olivia.get('/?q=nothing%20like%20this');
    expect(rows(none.html)).toEqual([]);
    expect(none.html).toContain('No conversation matches.');
    // The filter keeps what was asked, and says it as text, never as markup.
    const hostile = await olivia.get(`/?q=${encodeURIComponent('"><script>x</script>')}`);
    expect(hostile.status).toBe(200);
    expect(hostile.html).not.toContain('<script>x</script>');
  });

  it('shows a team member the private conversations they are in, owners and admins all of them', async () => {
    const tom = await signedIn('tom@desk.example');
    expect(rows((await tom.get('/?tag=urgent')).html)).toEqual([]);
    const olivia = await signedIn('olivia@desk.example');
    const urgent = await olivia.get('/?tag=urgent');
    expect(rows(urgent.html).map((r) => r.slug)).toEqual(['secret']);
    const item = present(elements(urgent.html).find((e) => e.tagName === 'li' && attr(e, 'class') === 'read'));
    expect(textOf(item)).toContain('Private');
  });

  it('reads every page in the same number of statements, filtered or not', async () => {
    const olivia = await signedIn('olivia@desk.example');
    // The mail worker looks only when a request wakes it here; let it finish the sign-in's mail.
    await new Promise((r) => setTimeout(r, 500));
    const count = async (path: string) => {
      const before = h.statements.length;
      expect((await olivia.get(path)).status).toBe(200);
      return h.statements.length - before;
    };
    const counts = [
      await count('/'),
      await count('/?page=2'),
      await count('/?tag=billing'),
      await count('/?q=questio'),
      // The same search again: its page's ids are kept, and read again in one statement too.
      await count('/?q=questio'),
    ];
    expect(new Set(counts).size).toBe(1);
    expect(counts[0]).toBeLessThanOrEqual(3);
  });

  it('reads a search asked again as it is now, once a reply has changed it', async () => {
    const olivia = await signedIn('olivia@desk.example');
    const before = rows((await olivia.get('/?q=question')).html).map((r) => r.slug);
    expect(before[0]).not.toBe('q-3');
    // A visitor's reply moves its conversation to the top of the inbox and of the search.
    expect((await new Visitor(h, HOST).reply('q-3', { text: 'One more thing' })).status).toBe(303);
    expect(rows((await olivia.get('/?q=question')).html).map((r) => r.slug)[0]).toBe('q-3');
  });
});
