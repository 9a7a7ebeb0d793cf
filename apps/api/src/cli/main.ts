import { runCli } from './program.ts';

/*
 * `npm run cli -- …`: one command line, with this process's streams and environment. Only as the
 * program: `npm install` imports every module once to fill the compile cache.
 */
if (import.meta.main) {
  const code = await runCli(process.argv.slice(2), {
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  if (code !== 0) process.exit(code);
}
