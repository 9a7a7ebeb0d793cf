/*
 * npm run new:operation -- <area> <verbNoun> [--domain <domain area>] [--method GET|POST]
 *
 * Writes a new operation the way CONTRIBUTING.md's recipe has it, compiling and tested from the
 * start, for you to make it do what it is for:
 *   packages/domain/src/<domain area>/<verb-noun>.ts   the use case (getReactions)
 *   packages/domain/src/<domain area>/views.ts         + its answer's wire shape (ZGetReactionsAnswer)
 *   packages/domain/src/<domain area>/ports.ts         + the port it reads through (GetReactionsStore)
 *   packages/db/src/repositories/<verb-noun>-store.ts  the port's store (PgGetReactionsStore), one query
 *   packages/router/src/procedures/<area>/<verb-noun>.types.ts and .ts   its declaration and procedure
 *   packages/router/src/router.ts, context.ts          + its registration, + the port among the services
 *   apps/api/src/start/services.ts                     + the store built
 *   apps/api/test/<verb-noun>.test.ts                  its REST and tRPC answers, 401
 *   apps/api/test/isolation-matrix.test.ts             + its two rows
 * and exports from both packages' index.ts. The REST path is the spec's style: /<area>/<verb_noun>.
 * A read (get…, list…) is GET, anything else POST, unless --method says. `--root` writes into
 * another checkout (the generator's own test uses a scratch copy).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { domain: { type: 'string' }, method: { type: 'string' }, root: { type: 'string' } },
});
const [area, name] = positionals;
if (!area || !name || !/^[a-z][a-zA-Z]*$/.test(area) || !/^[a-z]+[A-Z][a-zA-Z]*$/.test(name)) {
  console.error('usage: npm run new:operation -- <area> <verbNoun>   e.g. reactions getReactions');
  process.exit(2);
}
const root = values.root ?? new URL('..', import.meta.url).pathname;
const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const pascal = (s: string) => s[0]?.toUpperCase() + s.slice(1);

const file = kebab(name);
const label = snake(name);
const Name = pascal(name);
const areaDir = kebab(area);
const domainArea =
  values.domain ?? (existsSync(join(root, 'packages/domain/src', areaDir)) ? areaDir : 'conversations');
const method = values.method ?? (/^(get|list)[A-Z]/.test(name) ? 'GET' : 'POST');
const isRead = method === 'GET';
const path = `/${snake(area)}/${label}`;
const store = `${name}Store`;

const at = (p: string) => join(root, p);
function create(p: string, text: string) {
  if (existsSync(at(p))) throw new Error(`${p} exists already: nothing was written`);
  planned.push([p, text]);
}
/** Adds `text` to a file: at its end, or before the first match of `before` after `after`. */
function add(p: string, text: string, place: { after?: string; before: string } | 'end') {
  const current = edited.get(p) ?? readFileSync(at(p), 'utf8');
  if (place === 'end') {
    edited.set(p, `${current.trimEnd()}\n${text}`);
    return;
  }
  const from = place.after === undefined ? 0 : current.indexOf(place.after);
  const i = from < 0 ? -1 : current.indexOf(place.before, from);
  if (i < 0) throw new Error(`${p}: found no place for ${name} (looked for ${JSON.stringify(place.before)})`);
  edited.set(p, current.slice(0, i) + text + current.slice(i));
}
const planned: [string, string][] = [];
const edited = new Map<string, string>();

// The domain: the answer's shape, the port, the use case.
const domain = `packages/domain/src/${domainArea}`;
/**
 * Adds `text` to an area module: at the end of it (and `imports` at its top), or in a new one
 * (exported from the domain's index) when the area has none yet.
 */
function extend(module: string, imports: string, text: string) {
  const p = `${domain}/${module}`;
  if (existsSync(at(p))) {
    add(p, text, 'end');
    if (!readFileSync(at(p), 'utf8').includes(imports)) add(p, imports, { before: 'import' });
    return;
  }
  create(p, `${imports}${text}`);
  add('packages/domain/src/index.ts', `export * from './${domainArea}/${module}';\n`, 'end');
}
extend(
  'views.ts',
  "import { z } from 'zod';\n",
  `
/** What ${label} answers. */
export const Z${Name}Answer = z.object({
  conversations: z.number().int().meta({ description: "How many conversations the account has." }),
}).meta({ id: '${Name}Answer' });

export type ${Name}Answer = z.infer<typeof Z${Name}Answer>;
`,
);
extend(
  'ports.ts',
  `import type { ${Name}Answer } from './views.ts';\n`,
  `
/** What ${label} reads. */
export interface ${Name}Store {
  ${name}(accountId: number, request: ${Name}Request): Promise<${Name}Answer>;
}

/** What ${label} is asked. */
export type ${Name}Request = Record<string, never>;
`,
);

create(
  `${domain}/${file}.ts`,
  `import type { AccountContext } from '../records.ts';
import type { ${Name}Request, ${Name}Store } from './ports.ts';
import type { ${Name}Answer } from './views.ts';

/** ${label}: what it answers for the token's account. */
export async function ${name}(
  deps: { ${store}: ${Name}Store },
  account: AccountContext,
  request: ${Name}Request,
): Promise<${Name}Answer> {
  return deps.${store}.${name}(account.id, request);
}
`,
);
add('packages/domain/src/index.ts', `export * from './${domainArea}/${file}.ts';\n`, 'end');

// The database: the port's store.
create(
  `packages/db/src/repositories/${file}-store.ts`,
  `import type { ${Name}Answer, ${Name}Request, ${Name}Store } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { db, first } from './query.ts';

/** ${label}'s reads, scoped to the account, typed from the entities (a hot one: \`statement\` and \`run\`). */
export class Pg${Name}Store implements ${Name}Store {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async ${name}(accountId: number, _request: ${Name}Request): Promise<${Name}Answer> {
    const row = await first(
      this.em,
      db.selectFrom('conversation').select(sql<number>\`count(*)::int\`.as('n')).where('account_id', '=', accountId),
    );
    return { conversations: row?.n ?? 0 };
  }
}
`,
);
add('packages/db/src/index.ts', `export * from './repositories/${file}-store.ts';\n`, 'end');

// The router: declaration, procedure, registration, the port among the services.
const procedures = `packages/router/src/procedures/${areaDir}`;
create(
  `${procedures}/${file}.types.ts`,
  `import { Z${Name}Answer } from '@convo/domain';
import { z } from 'zod';
import type { OperationSpec } from '../../operation.ts';

export const Z${Name}Input = z.object({});

export const ${name}Spec = {
  input: Z${Name}Input${isRead ? '.prefault({})' : ''},
  output: Z${Name}Answer,
  meta: {
    openapi: {
      method: '${method}',
      path: '${path}',
      summary: '${label}',
      tags: ['${snake(area)}'],
      protect: true,
    },
  },
  doc: {
    description: '${label}: say what it answers, and what the spec leaves open that it decides.',
    example: { conversations: 3 },
    errors: {},
  },
} satisfies OperationSpec;
`,
);
create(
  `${procedures}/${file}.ts`,
  `import { ${name} } from '@convo/domain';
import { defineOperation } from '../../operation.ts';
import { ${name}Spec } from './${file}.types.ts';

export const ${name}Operation = defineOperation(${name}Spec, (procedure) =>
  procedure.${isRead ? 'query' : 'mutation'}(({ ctx, input }) => ${name}(ctx.services, ctx.account, input)),
);
`,
);
const routerFile = 'packages/router/src/router.ts';
add(routerFile, `import { ${name}Operation } from './procedures/${areaDir}/${file}.ts';\n`, {
  before: 'import { router }',
});
const routerText = edited.get(routerFile) ?? '';
if (new RegExp(`\\n  ${area}: \\{`).test(routerText)) {
  add(routerFile, `\n    ${name}: ${name}Operation,`, { after: `\n  ${area}: {`, before: '\n  }' });
} else {
  // A new area opens a block of its own, where the area's next operation finds its place.
  add(routerFile, `  ${area}: {\n    ${name}: ${name}Operation,\n  },\n`, {
    after: 'const procedures = {',
    before: '};',
  });
}
add('packages/router/src/context.ts', `  /** What ${label} reads. */\n  ${store}: ${Name}Store;\n`, {
  after: 'export interface ProcedureServices {',
  before: '  /** The account an API token acts for',
});
add('packages/router/src/context.ts', `  type ${Name}Store,\n`, { before: "} from '@convo/domain';" });

// The composition root.
add('apps/api/src/start/services.ts', `    ${store}: new Pg${Name}Store(em),\n`, {
  after: 'conversationLists,',
  before: '    checkAnswers',
});
add('apps/api/src/start/services.ts', `  Pg${Name}Store,\n`, { before: "} from '@convo/db';" });

// Tests: its answers, and its place in the isolation matrix.
create(
  `apps/api/test/${file}.test.ts`,
  `import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, call, BASE, type Harness, makeAccount, openHarness, type TestAccount } from './support/harness.ts';

let h: Harness;
let a: TestAccount;
beforeAll(async () => {
  h = await openHarness();
  a = await makeAccount(h, 'alpha');
});
afterAll(async () => h?.close());

const auth = () => ({ authorization: \`Bearer \${a.token}\` });

describe('${label}', () => {
  it('answers over REST and tRPC alike, for the token\\'s account', async () => {
    const rest = await apiCall(h, '${method}', '${path}', auth()${isRead ? '' : ', {}'});
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({ conversations: expect.any(Number) });
    const trpc = await call(
      h,
      ${
        isRead
          ? `new Request(\`\${BASE}/trpc/${area}.${name}?input=%7B%7D\`, { headers: auth() })`
          : `new Request(\`\${BASE}/trpc/${area}.${name}\`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: '{}',
      })`
      },
    );
    expect(trpc.body).toEqual({ result: { data: rest.body } });
  });

  it('asks for a token', async () => {
    expect((await apiCall(h, '${method}', '${path}', {}${isRead ? '' : ', {}'})).status).toBe(401);
  });
});
`,
);
add(
  'apps/api/test/isolation-matrix.test.ts',
  `
  {
    name: 'REST ${label}',
    of: '${area}.${name}',
    send: (hd) => apiCall(h, '${method}', '${path}', hd${isRead ? '' : ', {}'}),
  },
  {
    name: 'tRPC ${area}.${name}',
    of: '${area}.${name}',
    send: (hd) => ${isRead ? 'trpcQuery' : 'trpcMutation'}('${area}.${name}', {}, hd),
  },`,
  { after: 'const OPERATIONS: Operation[] = [', before: '\n];' },
);

for (const [p, text] of planned) {
  mkdirSync(dirname(at(p)), { recursive: true });
  writeFileSync(at(p), text);
}
for (const [p, text] of edited) writeFileSync(at(p), text);
console.log(
  [
    `${name}: ${method} /api/v1${path}, tRPC ${area}.${name}`,
    ...[...planned.map(([p]) => `  new     ${p}`), ...[...edited.keys()].map((p) => `  changed ${p}`)],
    'Next: npx biome check --write . && npm run typecheck, then make it do what it is for (CONTRIBUTING.md).',
  ].join('\n'),
);
