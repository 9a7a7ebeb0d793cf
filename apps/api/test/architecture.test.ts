import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { kebabName, operations } from '@convo/router';
import { describe, expect, it } from 'vitest';

/*
 * The house rules a reviewer would otherwise have to remember: the code stands on libraries'
 * documented APIs (no internals, no impersonating Proxies, no casts that silence the compiler),
 * and the layers depend downwards only: packages, the domain's areas, and files (no import cycle).
 */

const ROOT = new URL('../../../', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Every package's and app's source folder. */
const SOURCE_DIRS = [
  'apps/api/src',
  'packages/router/src',
  'packages/domain/src',
  'packages/db/src',
  'packages/client/src',
  'packages/pages/src',
];

const FORBIDDEN = [/\._def\b/, /\._zod\b/, /\bnew Proxy\(/, /\bas never\b/, /\bas unknown as\b/];

/** Every folder of code, tests and tools included (this file names the patterns, so it is left out). */
const ALL_CODE = [
  ...SOURCE_DIRS,
  'apps/api/test',
  'packages/client/test',
  'packages/db/test',
  'packages/domain/test',
  'packages/pages/test',
  'packages/router/test',
  'bench',
  'chaos',
  'infra',
  'scripts',
];

describe('the code', () => {
  it.each(ALL_CODE)('%s uses no library internals, Proxies or escape casts', (dir) => {
    const found = sources(dir)
      .filter((file) => !file.endsWith('architecture.test.ts'))
      .flatMap((file) =>
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

  // The domain by area: each imports its own files and those of areas on a lower rank only, so an
  // area can be read (and tested) with what lies under it. shared/ and records.ts import no area.
  const AREA_RANK: Record<string, number> = {
    shared: 0,
    'records.ts': 1,
    media: 2,
    live: 2,
    transcripts: 3,
    people: 3,
    conversations: 4,
    intake: 5,
    webhooks: 5,
    notifications: 5,
    team: 5,
    messages: 5,
    'mail-replies': 5,
    workflows: 6,
  };

  it('keeps the domain by area: an area imports shared/, records.ts and lower areas only', () => {
    const area = (file: string) => file.split('/')[0] ?? '';
    const wrong = sources('packages/domain/src').flatMap((file) => {
      const inside = file.slice('packages/domain/src/'.length);
      if (inside === 'index.ts') return [];
      const from = area(inside);
      expect(AREA_RANK[from], `${file} is in no area`).toBeDefined();
      return localImports(file).flatMap((target) => {
        const to = area(target.slice('packages/domain/src/'.length));
        return to === from || (AREA_RANK[to] ?? 99) < (AREA_RANK[from] ?? 0) ? [] : [`${file} → ${target}`];
      });
    });
    expect(wrong).toEqual([]);
  });

  it('names each operation once: its procedure, declaration and use case files and function are its name', () => {
    const domainFiles = sources('packages/domain/src');
    const missing = operations.flatMap((operation) => {
      const file = kebabName(operation.name);
      const area = kebabName(operation.path.split('.')[0] ?? '');
      const procedure = `packages/router/src/procedures/${area}/${file}`;
      const useCase = domainFiles.find((f) => f.endsWith(`/${file}.ts`));
      return [
        ...[`${procedure}.ts`, `${procedure}.types.ts`].filter((f) => !sources(dirname(f)).includes(f)),
        ...(useCase &&
        new RegExp(`^export (async function|function|const) ${operation.name}\\b`, 'm').test(
          readFileSync(join(ROOT, useCase), 'utf8'),
        )
          ? []
          : [`packages/domain/src/<area>/${file}.ts exporting ${operation.name}`]),
      ];
    });
    expect(missing).toEqual([]);
  });

  // apps/api by room: one imports its own files and lower rooms' only. logger.ts is everyone's.
  const ROOM_RANK: Record<string, number> = {
    'logger.ts': 0,
    media: 1,
    live: 1,
    workers: 2,
    mail: 1.5,
    http: 3,
    start: 4,
    cli: 5,
    entry: 6,
  };

  it('keeps apps/api by room: a room imports lower rooms only', () => {
    const room = (file: string) => file.slice('apps/api/src/'.length).split('/')[0] ?? '';
    const wrong = sources('apps/api/src').flatMap((file) => {
      const from = room(file);
      expect(ROOM_RANK[from], `${file} is in no room`).toBeDefined();
      return localImports(file)
        .filter((target) => target.startsWith('apps/api/src/'))
        .flatMap((target) => {
          const to = room(target);
          return to === from || (ROOM_RANK[to] ?? 99) < (ROOM_RANK[from] ?? 0) ? [] : [`${file} → ${target}`];
        });
    });
    expect(wrong).toEqual([]);
  });

  it.each(SOURCE_DIRS)('%s has no import cycle', (dir) => {
    const files = sources(dir);
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of localImports(file)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});

/** The files of this repository a source file imports by a relative path (types too). */
function localImports(file: string): string[] {
  return [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^(?:import|export)[^;]*?from '(\.[^']+\.ts)'/gms)].map(
    (m) => normalize(join(dirname(file), m[1] ?? '')),
  );
}
