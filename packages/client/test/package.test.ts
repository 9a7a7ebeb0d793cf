import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE,
  type Harness,
  makeAccount,
  openHarness,
  type TestAccount,
} from '../../../apps/api/test/support/harness.ts';

/*
 * The client as a project outside this repository gets it: built, packed by npm, unpacked into
 * a scratch project's node_modules beside its three dependencies (nothing of the monorepo), then
 * type-checked there and run against a server.
 */

const here = new URL('..', import.meta.url).pathname;
const repoModules = new URL('../../../node_modules/', import.meta.url).pathname;
const node = process.execPath;
let scratch: string;
let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'convo-client-'));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: here, stdio: 'pipe' });
  execFileSync('npm', ['pack', './dist', '--pack-destination', scratch, '--silent'], { cwd: here, stdio: 'pipe' });
  const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack made no tarball');
  const installed = join(scratch, 'node_modules', '@convo', 'client');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(scratch, tarball), '-C', installed, '--strip-components=1']);
  mkdirSync(join(scratch, 'node_modules', '@trpc'), { recursive: true });
  for (const dep of ['@trpc/client', '@trpc/server', 'zod']) {
    symlinkSync(join(repoModules, dep), join(scratch, 'node_modules', dep), 'dir');
  }
  h = await openHarness();
  acme = await makeAccount(h, 'packed');
}, 120_000);
afterAll(async () => {
  await h?.close();
  if (scratch && !process.env.KEEP_SCRATCH) rmSync(scratch, { recursive: true, force: true });
});

describe('the packed @convo/client', () => {
  it('holds only the built module, its declarations, README and manifest', () => {
    const listed = readdirSync(join(scratch, 'node_modules', '@convo', 'client')).sort();
    expect(listed).toEqual(['README.md', 'index.d.ts', 'index.js', 'package.json']);
  });

  it('type-checks a consumer with its answers typed to the field, and refuses a wrong one', () => {
    writeFileSync(
      join(scratch, 'consumer.ts'),
      `import { createConversationsClient, describeError } from '@convo/client';
const api = createConversationsClient({ baseUrl: 'https://conversations.example.com', token: 't' });
export async function titles(): Promise<string[]> {
  const page = await api.conversations.getConversations.query({ page: 1 });
  const one = await api.conversations.getConversation.query({ slug: 'kick-off' });
  const nice: string = one.conversation_credated_time_nice;
  // @ts-expect-error: no such field on a conversation
  one.no_such_field;
  // @ts-expect-error: page is a number
  await api.conversations.getConversations.query({ page: 'one' });
  return [nice, ...page.conversations.map((c) => c.title), describeError(null)?.code ?? ''];
}
`,
    );
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          // As most projects have it: the dependencies' own declarations are theirs to check.
          skipLibCheck: true,
          lib: ['ES2023', 'DOM'],
          types: [],
        },
        files: ['consumer.ts'],
      }),
    );
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    const tsc = join(repoModules, 'typescript', 'bin', 'tsc');
    const run = () => execFileSync(node, [tsc, '-p', scratch], { cwd: scratch, stdio: 'pipe' }).toString();
    expect(run()).toBe('');
  }, 120_000);

  it('calls a server from outside the repository', async () => {
    const packed = await import(pathToFileURL(join(scratch, 'node_modules', '@convo', 'client', 'index.js')).href);
    const api = packed.createConversationsClient({
      baseUrl: BASE,
      token: acme.token,
      fetch: (input: RequestInfo | URL, init?: RequestInit) => h.app.fetch(new Request(input, init)),
    });
    const created = await api.conversations.createConversation.mutate({ title: 'Packed', slug: 'packed' });
    const got = await api.conversations.getConversation.query({ slug: 'PACKED' });
    expect(got.id).toBe(created.id);
    const refused = await api.conversations.createConversation
      .mutate({ title: 'Again', slug: 'packed' })
      .catch((e: unknown) => e);
    expect(packed.describeError(refused)).toMatchObject({ code: 'slug_taken', status: 409 });
  });
});
