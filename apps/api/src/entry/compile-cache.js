/*
 * Preloaded before the first TypeScript module (`node --import=./apps/api/src/entry/compile-cache.js`:
 * package.json's start, cli and demo scripts, the Dockerfile). Node strips a module's types with
 * amaro, a WebAssembly build of SWC that stays in the process once loaded: some 17 MB of resident
 * memory for the server's whole life (issue 39). Node's compile cache keeps each module's stripped
 * source and V8 code on disk, keyed by its content, so a process whose modules are all in it never
 * loads amaro and compiles less. `npm install` fills it (scripts/warm-compile-cache.ts); a module
 * changed since is stripped and cached again by the first process that loads it.
 *
 * Plain JavaScript because it must run before anything is stripped. The directory:
 * NODE_COMPILE_CACHE, else os.tmpdir()/node-compile-cache (Node's own default);
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off. Worker threads (the media probe's) take it from the
 * environment.
 */
import { enableCompileCache } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Named here, not left to Node's default, because workers must be handed the same base directory:
// the one enableCompileCache() returns is its subdirectory for this Node and these flags, and a
// worker given that would keep its cache in a subdirectory of it, apart from the one filled.
const base = process.env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache');
if (enableCompileCache(base).directory) process.env.NODE_COMPILE_CACHE = base;
