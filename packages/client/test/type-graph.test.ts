import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/*
 * A frontend that imports @convo/client must not need the server's database layer to type-check:
 * the AppRouter type it gets carries the procedures' inputs and outputs, not MikroORM's types.
 * The check maps @mikro-orm/* and @convo/db to nowhere; any of them in the type graph fails it.
 */

const tsc = new URL('../../../node_modules/.bin/tsc', import.meta.url).pathname;
const project = new URL('./frontend/tsconfig.json', import.meta.url).pathname;

describe('the type graph a frontend imports', () => {
  it('type-checks with MikroORM and @convo/db absent', () => {
    let output = '';
    try {
      execFileSync(tsc, ['-p', project, '--listFilesOnly'], { encoding: 'utf8' });
      execFileSync(tsc, ['-p', project], { encoding: 'utf8' });
    } catch (e) {
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(output).toBe('');
    const files = execFileSync(tsc, ['-p', project, '--listFilesOnly'], { encoding: 'utf8' });
    expect(files).toContain('packages/router/src/router.ts');
    expect(files).not.toMatch(/@mikro-orm|packages\/db\//);
  });
});
