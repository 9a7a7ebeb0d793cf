import { findAccount, PgMessageTemplateStore } from '@convo/db';
import { createMessageTemplate, listMessageTemplates } from '@convo/domain';
import type { Command } from 'commander';
import { type Cli, emit, example, int, withDatabase } from './helpers.ts';
import { configuredMedia, keepFile } from './media-files.ts';

/** `template create | list`: the team's message templates, through the API's use cases. */
export function registerTemplateCommands(program: Command, cli: Cli): void {
  const template = program.command('template').description('manage message templates (the API: /message_templates)');
  example(
    template
      .command('create')
      .description("add a template to the account's library (its creator: the account's owner)")
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--name <name>', 'template name (unique in the account)')
      .option('--text <text>', 'its text: plain, or the safe subset of HTML create_message takes')
      .option('--recording <message id>', 'a message of the account whose recording it keeps', int('--recording'))
      .option('--file <path>', 'or a recording file (video or audio), measured as an upload is')
      .option('--screen', 'the file is a screen recording')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const media = await configuredMedia(cli.settings().config);
        const made = await withDatabase(cli, async (em) => {
          const account = await findAccount(em, o.account);
          return createMessageTemplate(
            { messageTemplates: new PgMessageTemplateStore(em), media },
            { id: account.id, owner: account.owner ?? null },
            { name: o.name, text: o.text, recording_message_id: o.recording },
            'account',
            o.file ? { file: await keepFile(media, o.file, account.id), kind: o.screen ? 'screen' : undefined } : {},
          );
        });
        emit(cli.io, o.json, made, `template ${made.id} (${made.name}) created`);
      }),
    'npm run cli -- template create --account acme --name "Refund on its way" --text "Your refund is on its way."',
  );
  example(
    template
      .command('list')
      .description("the account's message templates, by name")
      .requiredOption('--account <key>', 'account key')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const { message_templates: all } = await withDatabase(cli, async (em) =>
          listMessageTemplates({ messageTemplates: new PgMessageTemplateStore(em) }, await findAccount(em, o.account)),
        );
        emit(
          cli.io,
          o.json,
          all,
          all.length === 0
            ? 'no templates'
            : all
                .map(
                  (t) =>
                    `${t.id}\t${t.name}${t.recording ? `\t${t.recording.message_type} ${t.recording.recorded_duration_seconds}s` : ''}`,
                )
                .join('\n'),
        );
      }),
    'npm run cli -- template list --account acme',
  );
}
