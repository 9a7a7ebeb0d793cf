import { readFileSync } from 'node:fs';

/**
 * The Node options `npm start` (or `npm run cli`) runs with, from package.json's scripts (the
 * Dockerfile repeats start's, and infra/test/manifests.test.ts holds the two together). The bench
 * measures the product with them, and the compile cache is filled under them: V8 keeps a cache
 * apart for each set of flags.
 */
export function startOptions(script: 'start' | 'cli' | 'demo' = 'start'): string[] {
  const root = new URL('..', import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> };
  return (pkg.scripts[script] ?? '').split(/\s+/).filter((word) => word.startsWith('--'));
}
