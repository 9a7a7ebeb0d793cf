import { readFile } from 'node:fs/promises';
import { findAccount, loadSeed, renewToken, setHost } from '@convo/db';
import type { Command } from 'commander';
import { createLogger } from '../logger.ts';
import { serveOnNode } from '../start/serve-node.ts';
import { buildApp } from '../start/server.ts';
import { migrateDatabase, openDatabase } from '../start/services.ts';
import type { Cli } from './helpers.ts';

const DEMO_SEED = new URL('../../../../examples/seed.json', import.meta.url);

/**
 * The demo runs on your own machine, so webhooks may be tried there: to http:// receivers on
 * loopback and private addresses. The environment still decides when it sets them.
 */
const DEMO_DEFAULTS = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };

/** Starts the server with the demo account from examples/seed.json and prints how to call it. */
export function registerDemo(program: Command, cli: Cli): void {
  program
    .command('demo')
    .description(
      'start the server (embedded database by default) with a demo account; prints a fresh token and curl lines',
    )
    .addHelpText('after', '\nExample:\n  npm run demo\n  PORT=8080 npm run demo\n')
    .action(async () => {
      const { config, logger } = cli.settings(DEMO_DEFAULTS);
      const orm = await openDatabase(config, logger);
      await migrateDatabase(orm, logger);
      const em = orm.em.fork();
      const existing = await findAccount(em, 'demo').catch(() => null);
      const accountId =
        existing?.id ?? (await loadSeed(em, JSON.parse(await readFile(DEMO_SEED, 'utf8')))).accounts[0]?.id ?? 0;
      const { token } = await renewToken(em, accountId, 'demo');

      // Without SMTP_URL, mail (sign-in links) is logged at info level: the demo shows those lines.
      const app = buildApp(
        orm,
        config,
        logger,
        config.mail.smtpUrl ? logger : createLogger('info', { write: (line: string) => cli.io.stderr.write(line) }),
      );
      // The demo account lives at the server's own origin, so every URL the API prints opens here.
      const announce = async (port: number) => {
        const origin = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${port}`;
        const moved = await setHost(orm.em.fork(), 'demo', origin).catch((err: unknown) => {
          logger.warn({ err: (err as Error).message }, 'the demo account keeps its host');
          return null;
        });
        printHelp(origin, moved ? `${origin}/c/welcome` : null);
      };
      const printHelp = (origin: string, pageUrl: string | null) => {
        const base = `${origin}/api/v1/conversations`;
        const auth = `-H "Authorization: Bearer ${token}"`;
        cli.io.stdout.write(
          [
            `Conversations API listening on ${origin}`,
            `database: ${config.database.kind === 'pglite' ? `embedded PGlite in ${config.database.dataDir}` : 'PostgreSQL'}`,
            `demo account "demo", API token (new on every start): ${token}`,
            '',
            'Try it:',
            `  curl -s -X POST ${base}/create_conversation ${auth} -H 'content-type: application/json' -d '{"title":"Hello from curl"}'`,
            `  curl -s "${base}/get_conversation?slug=welcome" ${auth}`,
            `  curl -s "${base}/get_conversations?page=1" ${auth}`,
            ...(pageUrl
              ? [
                  '',
                  `Open a conversation page in a browser: ${pageUrl}`,
                  `Start a conversation as a visitor (the primary intake page): ${origin}/`,
                  `The team's pages (sign in as owner@demo.example.com): ${origin}/manage/intake-pages`,
                ]
              : []),
            '',
            config.webhooks.allowHttp && config.webhooks.allowPrivate
              ? 'Webhooks may go to http:// receivers on this machine here (the demo sets WEBHOOK_ALLOW_HTTP and ' +
                'WEBHOOK_ALLOW_PRIVATE; npm start refuses both unless you set them):'
              : 'Webhooks go to public https:// receivers only (WEBHOOK_ALLOW_HTTP / WEBHOOK_ALLOW_PRIVATE are off):',
            `  curl -s -X POST ${origin}/api/v1/webhooks ${auth} -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:9000/hook","events":["conversation_created","message_created"]}'`,
            config.mail.smtpUrl
              ? `Sign-in links are mailed through ${new URL(config.mail.smtpUrl).host}.`
              : 'No SMTP_URL is set: sign-in links are written to this console ("mail not sent … here it is").',
            '',
            'Stop with Ctrl-C.',
            '',
          ].join('\n'),
        );
      };
      await serveOnNode(app, orm, {
        host: config.host,
        port: config.port,
        logger,
        sendTimeoutMs: config.sendTimeoutMs,
        onListen: (port) => void announce(port),
      });
    });
}
