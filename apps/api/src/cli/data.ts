import { constants, createWriteStream } from 'node:fs';
import { cp, type FileHandle, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { text as readText } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { AdminError, type ExportProgress, exportAccounts } from '@convo/db';
import type { Command } from 'commander';
import { LOCK_FILE } from '../start/embedded-lock.ts';
import { type Cli, emit, example, int, withDatabase } from './helpers.ts';
import { importFromApi } from './import-api.ts';
import { configuredMedia, defaultMediaDir, exportRecordings } from './media-files.ts';
import { exportProgress, importProgress } from './progress.ts';

/*
 * Getting data out and in: `export` (the seed format, streamed), `import-api` (from any server
 * that speaks API v1), `backup` (the embedded database's files).
 */

/** A new file, readable and writable by its owner only; refused when anything (a file, a link) is there. */
async function openNew(path: string): Promise<FileHandle> {
  try {
    return await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new AdminError(`${path} already exists: an export never writes through a file or link it did not make`);
    }
    throw e;
  }
}

export function registerDataCommands(program: Command, cli: Cli): void {
  example(
    program
      .command('export')
      .description(
        'write accounts in the seed format (seed loads them back), streamed; API tokens and webhook secrets are left out',
      )
      .option('--account <key...>', 'the account(s) to export')
      .option('--all', 'export every account')
      .option('--since <time>', 'only conversations created after this ISO 8601 time (an incremental export)')
      .option('--out <file>', 'write here (written whole, then moved into place); default: standard output')
      .option(
        '--media-dir <dir>',
        'copy the recordings the server keeps into this folder (default with --out: beside it, acme.json -> acme-media/); without it on standard output, recordings are named by their download_media_url',
      )
      .option('--json', 'print the final report as JSON (and no progress)')
      .action(
        async (o: {
          account?: string[];
          all?: boolean;
          since?: string;
          out?: string;
          mediaDir?: string;
          json?: boolean;
        }) => {
          if ((o.account === undefined) === (o.all !== true)) throw new AdminError('give --account <key> or --all');
          const progress = exportProgress(cli.io.stderr, o.json === true);
          const started = performance.now();
          let last: ExportProgress = { account: '', conversations: 0, messages: 0, total: 0 };
          const partial = o.out === undefined ? undefined : `${o.out}.partial`;
          // Opened before the database, so a refused path changes nothing and removes nothing.
          const file = partial === undefined ? undefined : await openNew(partial);
          await withDatabase(cli, async (em) => {
            const mediaDir = o.mediaDir ?? (o.out === undefined ? undefined : defaultMediaDir(o.out));
            const base = o.out === undefined ? process.cwd() : dirname(resolve(o.out));
            const pieces = exportAccounts(em, o.all ? 'all' : (o.account ?? []), {
              since: o.since,
              media:
                mediaDir === undefined
                  ? undefined
                  : exportRecordings(await configuredMedia(cli.settings().config), mediaDir, base),
              onProgress: (p) => {
                last = { ...p };
                progress.update(p);
              },
            });
            // Made new (O_EXCL: never through a link or file someone placed there) and readable by its
            // owner only: an export holds every e-mail address and every private conversation.
            const out =
              file === undefined ? cli.io.stdout : createWriteStream(partial ?? '', { fd: file, flush: true });
            await pipeline(Readable.from(pieces), out, { end: partial !== undefined }).catch((e: unknown) => {
              // A reader that stopped early (`export … | head`) is not an error of the export.
              if ((e as NodeJS.ErrnoException).code !== 'EPIPE') throw e;
            });
          })
            .then(() => (o.out !== undefined ? rename(`${o.out}.partial`, o.out) : undefined))
            .catch(async (e: unknown) => {
              if (partial !== undefined) await rm(partial, { force: true });
              throw e;
            })
            .finally(() => progress.stop());
          const seconds = (performance.now() - started) / 1000;
          const report = { conversations: last.conversations, messages: last.messages, seconds, out: o.out ?? null };
          const text = `exported ${last.conversations} conversations, ${last.messages} messages in ${seconds.toFixed(1)}s (${Math.round(last.conversations / Math.max(seconds, 0.001))} conversations/s)${o.out ? ` to ${o.out}` : ''}`;
          // With the export on standard output, the report goes to standard error.
          if (o.out === undefined) cli.io.stderr.write(`${o.json ? JSON.stringify(report) : text}\n`);
          else emit(cli.io, o.json, report, text);
        },
      ),
    'npm run cli -- export --account acme --out acme.json   (--all for every account; --since 2026-01-01T00:00:00Z for an increment)',
  );

  example(
    program
      .command('import-api')
      .description(
        'read every conversation from a server that speaks API v1 (the original service, or another of these) into a local account; run it again to resume',
      )
      .requiredOption('--from <url>', "the source's base URL, e.g. https://api.example.com")
      .option(
        '--token <token>',
        "an API token of the source's account (visible to `ps`: prefer IMPORT_API_TOKEN=… or --token-stdin)",
      )
      .option('--token-stdin', "read the source's API token from standard input")
      .requiredOption('--account <key>', 'the local account (made, with the source host, if missing)')
      .option('--host <origin>', 'host for a new local account (default: the one in the source conversation URLs)')
      .option('--name <name>', 'name for a new local account (default: its key)')
      .option('--rate <n>', 'requests per second to the source, at most', int('--rate'), 10)
      .option('--state <file>', 'where the next page is kept between runs (default: .convo-import-<account>.json)')
      .option('--json', 'print the final report as JSON (and no progress)')
      .action(async (o) => {
        const token = o.tokenStdin ? (await readText(cli.io.stdin)).trim() : (o.token ?? cli.io.env.IMPORT_API_TOKEN);
        if (!token) throw new AdminError('give the source token: IMPORT_API_TOKEN=…, --token-stdin, or --token');
        const progress = importProgress(cli.io.stderr, o.json === true);
        const started = performance.now();
        const media = await configuredMedia(cli.settings().config);
        const report = await withDatabase(cli, (em) =>
          importFromApi(em, {
            from: o.from,
            token,
            account: o.account,
            host: o.host,
            name: o.name,
            rate: o.rate,
            stateFile: o.state ?? `.convo-import-${o.account}.json`,
            onProgress: progress.update,
            media,
          }),
        ).finally(() => progress.stop());
        const seconds = (performance.now() - started) / 1000;
        const refused = report.refused.map((r) => `  ${r.slug}: ${r.reason}`);
        emit(
          cli.io,
          o.json,
          { ...report, seconds },
          `imported ${report.conversations} conversations, ${report.messages} messages in ${seconds.toFixed(1)}s from ${report.pages} pages (${report.requests} requests); ${report.skipped} already here${refused.length > 0 ? `\nnot imported:\n${refused.join('\n')}` : ''}`,
        );
      }),
    'IMPORT_API_TOKEN=cnv_… npm run cli -- import-api --from https://old.example.com --account acme --rate 5',
  );

  example(
    program
      .command('backup')
      .description(
        'copy the embedded database (DATA_DIR) to a new directory, consistent: the server must be stopped (PostgreSQL: use pg_dump)',
      )
      .requiredOption('--out <dir>', 'a directory that does not exist yet; DATA_DIR=<dir> starts a server on the copy')
      .option('--json', 'print JSON')
      .action(async (o: { out: string; json?: boolean }) => {
        const { config } = cli.settings();
        if (config.database.kind !== 'pglite') {
          throw new AdminError('backup copies the embedded database; for PostgreSQL use pg_dump (README: Backups)');
        }
        const dataDir = config.database.dataDir;
        if (
          await stat(o.out).then(
            () => true,
            () => false,
          )
        )
          throw new AdminError(`${o.out} exists: give a new directory`);
        const started = performance.now();
        // Opening it takes the directory (refused while the server has it) and replays its log;
        // a checkpoint then writes every change into the data files, and closing leaves them still.
        await withDatabase(cli, async (em) => {
          await em.getConnection().execute('checkpoint');
        });
        await cp(dataDir, o.out, { recursive: true, filter: (src) => basename(src) !== LOCK_FILE });
        const files = await readdir(o.out, { recursive: true });
        let bytes = 0;
        for (const f of files) {
          const s = await stat(join(o.out, f));
          if (s.isFile()) bytes += s.size;
        }
        const seconds = (performance.now() - started) / 1000;
        emit(
          cli.io,
          o.json,
          { out: o.out, from: dataDir, bytes, seconds },
          `backed up ${dataDir} to ${o.out} (${(bytes / 1_048_576).toFixed(1)} MB in ${seconds.toFixed(1)}s); restore: DATA_DIR=${o.out} npm start, or copy it back`,
        );
      }),
    'npm run cli -- backup --out backups/2026-11-23   (with the server stopped)',
  );
}
