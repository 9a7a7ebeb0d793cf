import { describe, expect, it } from 'vitest';
import { answerJson, ConversationListCache, type ListedPage, type PageAt } from '../src/index.ts';

/*
 * The page cache's rules, with a read that counts its calls: the same page at the same change
 * mark is read once; a newer mark or another address reads again; an older mark never replaces a
 * newer page; errors are not kept; the budget holds. The API's own tests (apps/api/test) hold the
 * same over HTTP and PostgreSQL: a change on another process is seen at once.
 */

const at = (o: Partial<PageAt> = {}): PageAt => ({
  accountId: 1,
  changeMark: '5',
  host: 'https://a.example.com',
  key: 'a',
  page: 1,
  ...o,
});

/** A read that answers a page naming its call's number (and `size` characters of text). */
function reader(size = 10) {
  let calls = 0;
  const read = async (): Promise<ListedPage> => {
    calls += 1;
    const title = `read ${calls} `.padEnd(size, '.');
    return {
      view: { conversations: [{ title } as ListedPage['view']['conversations'][number]] },
      position: { page: 1, hasPrevious: false, hasNext: false },
    };
  };
  return { read, calls: () => calls };
}

const titleOf = (p: ListedPage) => p.view.conversations[0]?.title;

describe('ConversationListCache', () => {
  it('reads a page once per change mark, and again after the mark grows or the address changes', async () => {
    const cache = new ConversationListCache(1024 * 1024);
    const r = reader();
    expect(titleOf(await cache.remember(at(), r.read))).toMatch(/^read 1 /);
    expect(titleOf(await cache.remember(at(), r.read))).toMatch(/^read 1 /);
    expect(r.calls()).toBe(1);
    expect(titleOf(await cache.remember(at({ changeMark: '6' }), r.read))).toMatch(/^read 2 /);
    expect(titleOf(await cache.remember(at({ changeMark: '6', host: 'https://b.example.com' }), r.read))).toMatch(
      /^read 3 /,
    );
    // Another page, another account: each its own.
    await cache.remember(at({ changeMark: '6', page: 2 }), r.read);
    await cache.remember(at({ accountId: 2 }), r.read);
    expect(r.calls()).toBe(5);
  });

  it('answers a request that read an older mark from its own read, and keeps the newer page', async () => {
    const cache = new ConversationListCache(1024 * 1024);
    const r = reader();
    await cache.remember(at({ changeMark: '10' }), r.read);
    expect(titleOf(await cache.remember(at({ changeMark: '9' }), r.read))).toMatch(/^read 2 /);
    expect(titleOf(await cache.remember(at({ changeMark: '10' }), r.read))).toMatch(/^read 1 /);
    // Marks compare as numbers, not as text.
    expect(titleOf(await cache.remember(at({ changeMark: '100' }), r.read))).toMatch(/^read 3 /);
    expect(r.calls()).toBe(3);
  });

  it('shares one read among concurrent requests for the same page and mark', async () => {
    const sources: string[] = [];
    const cache = new ConversationListCache(1024 * 1024, (from) => sources.push(from));
    const r = reader();
    const pages = await Promise.all(Array.from({ length: 20 }, () => cache.remember(at(), r.read)));
    expect(r.calls()).toBe(1);
    expect(new Set(pages.map(titleOf)).size).toBe(1);
    // Told where each answer came from, for /metrics.
    expect(sources.filter((s) => s === 'database')).toHaveLength(1);
    expect(sources.filter((s) => s === 'memory')).toHaveLength(19);
  });

  it('keeps no error: the next request reads again', async () => {
    const cache = new ConversationListCache(1024 * 1024);
    const r = reader();
    await expect(cache.remember(at(), () => Promise.reject(new Error('no such page')))).rejects.toThrow('no such page');
    expect(titleOf(await cache.remember(at(), r.read))).toMatch(/^read 1 /);
    expect(r.calls()).toBe(1);
  });

  it("makes a kept page's JSON text once, which answerJson then writes; any other answer is made anew", async () => {
    const cache = new ConversationListCache(1024 * 1024);
    const page = await cache.remember(at(), reader().read);
    const text = answerJson(page.view);
    expect(text).toBe(JSON.stringify(page.view));
    // The same string, not an equal one made again.
    expect(Object.is(answerJson((await cache.remember(at(), reader().read)).view), text)).toBe(true);
    expect(answerJson({ other: [1, 2] })).toBe('{"other":[1,2]}');
  });

  it('stays within its budget, forgetting the least recently used page first', async () => {
    const one = new ConversationListCache(1024 * 1024);
    await one.remember(at(), reader(1_000).read);
    // Room for three pages of this size.
    const budget = Math.floor(one.bytes * 3.5);
    const cache = new ConversationListCache(budget);
    const r = reader(1_000);
    for (const page of [1, 2, 3]) await cache.remember(at({ page }), r.read);
    await cache.remember(at({ page: 1 }), r.read); // used again: now the most recent
    await cache.remember(at({ page: 4 }), r.read); // page 2 goes
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    expect(r.calls()).toBe(4);
    await cache.remember(at({ page: 1 }), r.read);
    await cache.remember(at({ page: 3 }), r.read);
    expect(r.calls()).toBe(4);
    await cache.remember(at({ page: 2 }), r.read);
    expect(r.calls()).toBe(5);
    // A page larger than the whole budget is answered, not kept.
    const small = new ConversationListCache(100);
    await small.remember(at(), r.read);
    expect(small.bytes).toBe(0);
  });

  it('keeps nothing with a budget of 0', async () => {
    const cache = new ConversationListCache(0);
    const r = reader();
    await cache.remember(at(), r.read);
    await cache.remember(at(), r.read);
    expect(r.calls()).toBe(2);
    expect(cache.bytes).toBe(0);
  });
});
