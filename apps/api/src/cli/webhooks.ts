import { findAccount, PgWebhookEndpointStore, parseEvents, redeliverEvent, webhookAttempts } from '@convo/db';
import { createWebhook, deleteWebhook, listWebhooks, type WebhookEndpointServices } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import type { Command } from 'commander';
import { webhookTargets } from '../workers/webhook-target.ts';
import { type Cli, emit, example, int, withDatabase } from './helpers.ts';

/** The same use cases the API's /webhooks operations call, over the CLI's connection. */
const endpointServices = (em: EntityManager, cli: Cli): WebhookEndpointServices => ({
  webhookEndpoints: new PgWebhookEndpointStore(em),
  webhookTargets: webhookTargets(cli.settings().config.webhooks),
});

/** `webhook add | list | remove | deliveries | redeliver`: an account's endpoints, as an operator sees them. */
export function registerWebhookCommands(program: Command, cli: Cli): void {
  const webhook = program.command('webhook').description("manage an account's webhook endpoints");
  example(
    webhook
      .command('add')
      .description('subscribe an endpoint to events (its signing secret is shown once)')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--url <url>', 'the https:// endpoint')
      .option(
        '--events <list>',
        'comma-separated: conversation_created, message_created',
        'conversation_created,message_created',
      )
      .option('--json', 'print JSON')
      .action(async (o) => {
        const events = parseEvents(o.events);
        const made = await withDatabase(cli, async (em) =>
          createWebhook(endpointServices(em, cli), await findAccount(em, o.account), { url: o.url, events }),
        );
        emit(
          cli.io,
          o.json,
          made,
          `webhook ${made.id}: ${made.url} (${made.events.join(', ')})\nsigning secret (shown once): ${made.secret}`,
        );
      }),
    'npm run cli -- webhook add --account acme --url https://hooks.example.com/convo --events conversation_created,message_created',
  );
  example(
    webhook
      .command('list')
      .description("the account's endpoints: events, status (active, failing, disabled), deliveries pending")
      .requiredOption('--account <key>', 'account key')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const list = await withDatabase(cli, async (em) =>
          listWebhooks(endpointServices(em, cli), await findAccount(em, o.account)),
        );
        emit(
          cli.io,
          o.json,
          list,
          list.length === 0
            ? 'no webhook endpoints'
            : list
                .map(
                  (w) =>
                    `${w.id}  ${w.status.padEnd(8)} ${w.url}  ${w.events.join(',')}  pending ${w.pending_deliveries}`,
                )
                .join('\n'),
        );
      }),
    'npm run cli -- webhook list --account acme',
  );
  example(
    webhook
      .command('remove')
      .description('unsubscribe an endpoint; its pending deliveries go with it')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--id <id>', 'endpoint id (see webhook list)', int('--id'))
      .option('--json', 'print JSON')
      .action(async (o) => {
        await withDatabase(cli, async (em) =>
          deleteWebhook(endpointServices(em, cli), await findAccount(em, o.account), o.id),
        );
        emit(cli.io, o.json, { removed: o.id }, `webhook ${o.id} removed`);
      }),
    'npm run cli -- webhook remove --account acme --id 2',
  );
  example(
    webhook
      .command('deliveries')
      .description("an endpoint's last attempts: when, which event, the answer's status, latency")
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--id <id>', 'endpoint id', int('--id'))
      .option('--json', 'print JSON')
      .action(async (o) => {
        const attempts = await withDatabase(cli, async (em) =>
          webhookAttempts(em, (await findAccount(em, o.account)).id, o.id),
        );
        emit(
          cli.io,
          o.json,
          attempts,
          attempts.length === 0
            ? 'no attempts yet'
            : attempts
                .map(
                  (a) =>
                    `${a.at}  ${a.event} ${a.type}  ${a.status ?? '-'}  ${a.latencyMs} ms  ${a.delivery}${a.error ? `  ${a.error}` : ''}`,
                )
                .join('\n'),
        );
      }),
    'npm run cli -- webhook deliveries --account acme --id 1',
  );
  example(
    webhook
      .command('redeliver')
      .description('send an event again to its endpoints, on a fresh retry schedule')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--event <id>', 'event id (evt_N or N, as webhook-id and deliveries show it)', (v: string) =>
        int('--event')(v.replace(/^evt_/, '')),
      )
      .option('--json', 'print JSON')
      .action(async (o) => {
        const n = await withDatabase(cli, async (em) =>
          redeliverEvent(em, (await findAccount(em, o.account)).id, o.event),
        );
        emit(
          cli.io,
          o.json,
          { event: `evt_${o.event}`, deliveries: n },
          `evt_${o.event}: ${n} deliveries queued again`,
        );
      }),
    'npm run cli -- webhook redeliver --account acme --event evt_42',
  );
}
