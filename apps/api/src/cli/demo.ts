import { readFile, rm } from 'node:fs/promises';
import { AdminError, findAccount, loadSeed, renewToken, setHost } from '@convo/db';
import type { Command } from 'commander';
import { DemoMailbox, mailBlock } from '../http/demo-mail.ts';
import { serveOnNode } from '../start/serve-node.ts';
import { buildApp } from '../start/server.ts';
import { migrateDatabase, openDatabase } from '../start/services.ts';
import type { Cli } from './helpers.ts';

const DEMO_SEED = new URL('../../../../examples/seed.json', import.meta.url);

/**
 * The demo runs on your own machine, so webhooks may be tried there: to http:// receivers on
 * loopback and private addresses; and notifications may be answered by mail, through an SMTP
 * listener on a free port of loopback. The environment still decides when it sets them.
 */
const DEMO_DEFAULTS = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  INBOUND_MAIL_DOMAIN: 'reply.localhost',
  INBOUND_SMTP_PORT: '0',
  INBOUND_SMTP_HOST: '127.0.0.1',
};

/** Starts the server with the demo account from examples/seed.json and prints how to call it. */
export function registerDemo(program: Command, cli: Cli): void {
  program
    .command('demo')
    .description(
      'start the server (embedded database by default) with a demo account; prints a fresh token and curl lines',
    )
    .option(
      '--reset',
      "start again from nothing: the embedded database's directory and the recordings are deleted first",
    )
    .addHelpText('after', '\nExample:\n  npm run demo\n  PORT=8080 npm run demo\n  npm run demo -- --reset\n')
    .action(async (o: { reset?: boolean }) => {
      const { config, logger } = cli.settings(DEMO_DEFAULTS);
      if (o.reset) {
        if (config.database.kind !== 'pglite') {
          throw new AdminError(
            '--reset deletes the embedded database only; with DATABASE_URL, drop that database yourself',
          );
        }
        await rm(config.database.dataDir, { recursive: true, force: true });
        if (!config.media.s3) await rm(config.media.dir, { recursive: true, force: true });
      }
      const orm = await openDatabase(config, logger);
      await migrateDatabase(orm, logger);
      const em = orm.em.fork();
      const existing = await findAccount(em, 'demo').catch(() => null);
      const accountId =
        existing?.id ?? (await loadSeed(em, JSON.parse(await readFile(DEMO_SEED, 'utf8')))).accounts[0]?.id ?? 0;
      const { token } = await renewToken(em, accountId, 'demo');

      // Without SMTP_URL, each mail (sign-in links) is printed as a block and listed at /_demo/mail.
      let mailPage = '/_demo/mail';
      const mailbox = new DemoMailbox();
      const app = await buildApp(orm, config, logger, {
        demoMail: config.mail.smtpUrl
          ? undefined
          : { mailbox, printMail: (mail) => cli.io.stdout.write(mailBlock(mail, mailPage)) },
      });
      // The demo account lives at the server's own origin, so every URL the API prints opens here.
      const announce = async (port: number) => {
        const origin = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${port}`;
        mailPage = `${origin}/_demo/mail`;
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
              : `No SMTP_URL is set: each mail (sign-in links) is printed here and listed at ${origin}/_demo/mail.`,
            ...(app.smtpPort !== null && config.inbound.domain
              ? [
                  '',
                  `Notifications may be answered by mail: this server takes replies by SMTP on 127.0.0.1:${app.smtpPort}.`,
                  "Put a notification's Reply-To address (reply+…) and its recipient's address in this line:",
                  `  printf 'From: FROM\\r\\nTo: REPLY_TO\\r\\nSubject: Re\\r\\n\\r\\nMy answer, by mail.\\r\\n' | curl -s smtp://127.0.0.1:${app.smtpPort} --mail-from FROM --mail-rcpt REPLY_TO -T -`,
                ]
              : []),
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
