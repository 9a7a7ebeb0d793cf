import { AdminError, findAccount, PgTranscriptStore } from '@convo/db';
import { transcriptStatus, webVtt } from '@convo/domain';
import type { Command } from 'commander';
import { type Cli, emit, example, int, withDatabase } from './helpers.ts';

/** `transcript show | retry`: a recording's transcript, as the team sees it on the page. */
export function registerTranscriptCommands(program: Command, cli: Cli): void {
  const transcript = program
    .command('transcript')
    .description("a recording's transcript, made by the speech engine (TRANSCRIBE_URL)");
  example(
    transcript
      .command('show')
      .description("a message's recording's transcript: where it stands, and its words (or its captions)")
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--message <id>', 'the message whose recording it is', int('--message'))
      .option('--vtt', 'print its captions (WebVTT) instead')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const transcribing = cli.settings().config.transcribe !== null;
        const kept = await withDatabase(cli, async (em) => {
          const account = await findAccount(em, o.account);
          return (await new PgTranscriptStore(em).byMessages(account.id, [o.message])).get(o.message);
        });
        if (!kept) throw new AdminError(`message ${o.message} of ${o.account} has no recording kept here`);
        const status = transcriptStatus(transcribing, kept);
        if (o.vtt) {
          if (status !== 'complete') throw new AdminError(`the transcript is ${status}: it has no captions yet`);
          cli.io.stdout.write(webVtt(kept.segments));
          return;
        }
        const shown = { message_id: o.message, status, language: kept.language, reason: kept.reason, text: kept.text };
        const lines = [
          `message ${o.message}: ${status}${kept.language ? ` (${kept.language})` : ''}`,
          ...(kept.reason && status !== 'complete' ? [`reason: ${kept.reason}`] : []),
          ...(status === 'complete' ? [kept.text] : []),
        ];
        emit(cli.io, o.json, shown, lines.join('\n'));
      }),
    'npm run cli -- transcript show --account acme --message 42',
  );
  example(
    transcript
      .command('retry')
      .description('make it again from its first try (after a failure, or with another engine or model)')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--message <id>', 'the message whose recording it is', int('--message'))
      .option('--json', 'print JSON')
      .action(async (o) => {
        const again = await withDatabase(cli, async (em) => {
          const account = await findAccount(em, o.account);
          return new PgTranscriptStore(em).retry({ accountId: account.id, conversationId: null, messageId: o.message });
        });
        if (!again) throw new AdminError(`message ${o.message} of ${o.account} has no recording kept here`);
        emit(
          cli.io,
          o.json,
          { message_id: o.message, status: 'pending' },
          `message ${o.message}: its transcript will be made again`,
        );
      }),
    'npm run cli -- transcript retry --account acme --message 42',
  );
}
