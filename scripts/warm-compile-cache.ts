/*
 * Fills Node's compile cache for the server and the CLI (apps/api/src/entry/compile-cache.js says
 * why). Run by `npm install` (package.json's postinstall) and by the image's build. V8 keeps a cache
 * apart for each set of flags, so the filling runs in a child started with `npm start`'s options
 * (the CLI and the demo run with the same). There each module of the apps' and the packages'
 * sources is imported once: a module is stripped and compiled before it runs, so one that fails as
 * it runs (the probe's worker outside a worker) is cached all the same, and the entries and the
 * CLI's main run only as the program (`import.meta.main`). Never fails an install: a cache it
 * cannot fill only means a first start that strips the types itself.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { flushCompileCache, getCompileCacheDir } from 'node:module';
import { join } from 'node:path';
import { startOptions } from './start-options.ts';

const root = new URL('..', import.meta.url).pathname;

/** Every TypeScript module of the apps' and the packages' sources. */
const modules = (): string[] =>
  ['apps', 'packages']
    .flatMap((group) => readdirSync(join(root, group)).map((name) => join(root, group, name, 'src')))
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((file) => join(dir, file)))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));

async function fill(): Promise<void> {
  const directory = getCompileCacheDir();
  if (!directory) return console.log('compile cache: off (NODE_DISABLE_COMPILE_CACHE, or no directory to write)');
  const files = modules();
  let failed = 0;
  for (const file of files) await import(file).catch(() => failed++);
  flushCompileCache();
  const note = failed ? ` (${failed} failed as they ran, cached all the same)` : '';
  console.log(`compile cache: ${files.length} modules in ${directory}${note}`);
}

try {
  if (process.argv.includes('--fill')) await fill();
  else {
    const self = new URL(import.meta.url).pathname;
    spawnSync(process.execPath, [...startOptions(), self, '--fill'], { cwd: root, stdio: 'inherit' });
  }
} catch (err) {
  console.log(`compile cache not filled: ${err instanceof Error ? err.message : err}`);
}
process.exit(0);
