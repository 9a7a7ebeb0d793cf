import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';

/*
 * The manifest of the package as published, written into dist/ beside the build: the workspace's
 * own manifest points at the sources (what the monorepo's tests and type checks read), the
 * published one at the built module and its bundled declarations. `npm pack ./dist` packs it.
 */
const here = new URL('..', import.meta.url);
const source = JSON.parse(readFileSync(new URL('package.json', here), 'utf8'));
const manifest = {
  name: source.name,
  version: source.version,
  description: source.description,
  license: 'MIT',
  type: 'module',
  exports: { '.': { types: './index.d.ts', default: './index.js' } },
  types: './index.d.ts',
  files: ['index.js', 'index.d.ts', 'README.md'],
  dependencies: source.dependencies,
};
writeFileSync(new URL('dist/package.json', here), `${JSON.stringify(manifest, null, 2)}\n`);
copyFileSync(new URL('README.md', here), new URL('dist/README.md', here));
