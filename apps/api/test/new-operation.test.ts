import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/*
 * `npm run new:operation` as a contributor runs it, in a scratch copy of this checkout (its own
 * workspace links, the rest of node_modules shared): a read in a new area and a write in an
 * existing one whose domain folder has no views.ts yet, then the copy's type check and the new operations' own tests.
 */

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const NODE = process.execPath;
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'convo-new-operation-'));
  cpSync(ROOT, scratch, {
    recursive: true,
    filter: (src) => !/\/(node_modules|\.git|\.data|\.turbo)(\/|$)/.test(src.slice(ROOT.length - 1)),
  });
  mkdirSync(join(scratch, 'node_modules/@convo'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry !== '@convo' && entry !== '.cache')
      symlinkSync(join(ROOT, 'node_modules', entry), join(scratch, 'node_modules', entry));
  }
  for (const pkg of readdirSync(join(scratch, 'packages'))) {
    symlinkSync(join(scratch, 'packages', pkg), join(scratch, 'node_modules/@convo', pkg));
  }
});
const childEnv = () => Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST')));

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('npm run new:operation', () => {
  it('writes operations that type-check and pass their tests, registered and named once', async () => {
    const generate = (...args: string[]) =>
      run(NODE, [join(scratch, 'scripts/new-operation.ts'), ...args, '--root', scratch], { cwd: scratch });
    const read = await generate('reactions', 'getReactions');
    expect(read.stdout).toContain('getReactions: GET /api/v1/reactions/get_reactions, tRPC reactions.getReactions');
    // A write in an area whose domain folder has ports but no views.ts yet.
    const write = await generate('webhooks', 'pingWebhook');
    expect(write.stdout).toContain('POST /api/v1/webhooks/ping_webhook');
    // Run again, it refuses and writes nothing.
    await expect(generate('reactions', 'getReactions')).rejects.toMatchObject({
      stderr: expect.stringMatching(/exists already/),
    });
    await run(NODE, [join(scratch, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: scratch });
    const tests = await run(
      NODE,
      [
        join(scratch, 'node_modules/vitest/vitest.mjs'),
        'run',
        'apps/api/test/get-reactions.test.ts',
        'apps/api/test/ping-webhook.test.ts',
        'apps/api/test/architecture.test.ts',
      ],
      // Its own run: none of this run's settings (its JSON report, its worker) but the database's.
      { cwd: scratch, env: { ...childEnv(), NO_COLOR: '1' } },
    );
    expect(tests.stdout).toMatch(/Test Files {2}3 passed/);
  }, 600_000);
});
