import ts from 'typescript';

/*
 * Part of `npm run typecheck`: a frontend that imports @convo/client must not need the server's
 * database layer to type-check. The AppRouter type it gets carries the procedures' inputs and
 * outputs, not MikroORM's types. packages/client/test/frontend is such a frontend's code; this
 * type-checks it and fails when its type graph holds MikroORM or @convo/db (or misses the router,
 * which would make the check say nothing).
 */

const project = new URL('../packages/client/test/frontend/tsconfig.json', import.meta.url).pathname;
const read = ts.readConfigFile(project, ts.sys.readFile);
const config = ts.parseJsonConfigFileContent(read.config, ts.sys, new URL('.', `file://${project}`).pathname);
const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
const files = program.getSourceFiles().map((f) => f.fileName);
const leaked = files.filter((f) => /@mikro-orm|packages\/db\//.test(f));
if (!files.some((f) => f.endsWith('packages/router/src/router.ts')))
  problems.push('the router is not in the type graph');
if (leaked.length > 0)
  problems.push(`the frontend's type graph holds ${leaked.length} files of the server's, ${leaked[0]} first`);
if (problems.length > 0) {
  console.error(`type graph of a frontend:\n${problems.join('\n')}`);
  process.exit(1);
}
