import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The house rules a reviewer would otherwise have to remember: the code stands on libraries'
 * documented APIs (no internals, no impersonating Proxies, no casts that silence the compiler),
 * and the layers depend downwards only.
 */

const ROOT = new URL('../../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

const FORBIDDEN = [/\._def\b/, /\._zod\b/, /\bnew Proxy\(/, /\bas never\b/, /\bas unknown as\b/];

describe('the code', () => {
  it.each([
    'apps/api/src',
    'packages/router/src',
    'packages/domain/src',
    'packages/db/src',
    'packages/client/src',
    'packages/pages/src',
  ])('%s uses no library internals, Proxies or escape casts', (dir) => {
    const found = sources(dir).flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (FORBIDDEN.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('keeps the layers apart: the domain imports no ORM, tRPC or runtime; the router and the pages no database package', () => {
    const imports = (dir: string) =>
      sources(dir).flatMap((file) =>
        [...readFileSync(join(ROOT, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => `${file} → ${m[1]}`),
      );
    expect(imports('packages/domain/src').filter((i) => /@mikro-orm|@trpc|@convo\/|node:/.test(i))).toEqual([]);
    expect(imports('packages/router/src').filter((i) => /@mikro-orm|@convo\/db/.test(i))).toEqual([]);
    // The pages read through the domain's ports and use cases, as the API does.
    expect(imports('packages/pages/src').filter((i) => /@mikro-orm|@trpc|@convo\/(db|router)/.test(i))).toEqual([]);
  });
});
