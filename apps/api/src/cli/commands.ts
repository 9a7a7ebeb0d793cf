import { statSync } from 'node:fs';
import {
  AdminError,
  addUser,
  createAccount,
  createIntakePage,
  createWorkflow,
  findAccount,
  issueToken,
  listTokens,
  loadSeedAccounts,
  memberStore,
  PgIntakePageAdminStore,
  PgMailOutbox,
  PgTeamStore,
  PgWorkflowStore,
  pendingMigrations,
  revokeToken,
  setHost,
  setRateLimit,
} from '@convo/db';
import {
  addConversationMember,
  changeIntakePage,
  changeWorkflow,
  listIntakePages,
  listWorkflows,
  type MemberOutcome,
  removeConversationMember,
  TEAM_ROLES,
  updateTeamMember,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type Command, Option } from 'commander';
import { migrateDatabase, openDatabase } from '../start/services.ts';
import { webhookTargets } from '../workers/webhook-target.ts';
import { registerDataCommands } from './data.ts';
import { registerDemo } from './demo.ts';
import { type Cli, emit, example, int, jsonArray, withDatabase } from './helpers.ts';
import { configuredMedia, importRecordings } from './media-files.ts';
import { seedProgress } from './progress.ts';
import { readSeedFile } from './seed-file.ts';
import { registerTemplateCommands } from './templates.ts';
import { registerTranscriptCommands } from './transcripts.ts';
import { registerWebhookCommands } from './webhooks.ts';

export type { Cli, CliIo } from './helpers.ts';

export function registerCommands(program: Command, cli: Cli): void {
  registerDemo(program, cli);
  registerWebhookCommands(program, cli);
  registerTemplateCommands(program, cli);
  registerTranscriptCommands(program, cli);
  registerDataCommands(program, cli);

  example(
    program
      .command('migrate')
      .description('apply pending database migrations')
      .option('--json', 'print JSON')
      .action(async (o: { json?: boolean }) => {
        const { config, logger } = cli.settings();
        const orm = await openDatabase(config, logger);
        try {
          const pending = await pendingMigrations(orm);
          await migrateDatabase(orm, logger);
          emit(
            cli.io,
            o.json,
            { applied: pending },
            pending.length ? `applied: ${pending.join(', ')}` : 'nothing to migrate',
          );
        } finally {
          await orm.close();
        }
      }),
    'npm run cli -- migrate',
  );

  const account = program.command('account').description('manage accounts');
  example(
    account
      .command('create')
      .description('create an account and print its first API token (shown once)')
      .requiredOption('--key <key>', 'short key used in embed URLs (lowercase letters, digits, _ and -)')
      .requiredOption('--name <name>', 'display name')
      .requiredOption('--host <origin>', "the account's own host, e.g. https://acme.example.com")
      .option('--owner-email <email>', 'e-mail of the owner, who joins every new conversation')
      .option('--owner-name <name>', 'name of the owner')
      .option('--title-template <template>', 'default title; {date} and {time} are replaced (UTC)')
      .option('--private', 'new conversations default to private (anyone_can_post false)')
      .option('--no-anonymous', 'new conversations default to no anonymous messages')
      .option('--no-search-engines', 'new conversations default to not indexable')
      .option('--json', 'print JSON')
      .action(async (o) => {
        if ((o.ownerEmail === undefined) !== (o.ownerName === undefined)) {
          throw new AdminError('give both --owner-email and --owner-name, or neither');
        }
        const made = await withDatabase(cli, (em) =>
          createAccount(em, {
            key: o.key,
            name: o.name,
            host: o.host,
            owner: o.ownerEmail ? { email: o.ownerEmail, name: o.ownerName } : undefined,
            titleTemplate: o.titleTemplate,
            defaults: {
              anyoneCanPost: !o.private,
              allowAnonymousMessages: o.anonymous,
              allowSearchEngines: o.searchEngines,
            },
          }),
        );
        emit(
          cli.io,
          o.json,
          made,
          `account ${made.key} (id ${made.id}) created\nAPI token (shown once): ${made.token.token}`,
        );
      }),
    'npm run cli -- account create --key acme --name "Acme" --host https://acme.example.com --owner-email o@acme.example --owner-name "Olive"',
  );

  example(
    account
      .command('rate-limit')
      .description("set how many requests each of the account's tokens may make per window (RATE_LIMIT_WINDOW_S)")
      .requiredOption('--key <key>', 'account key')
      .requiredOption(
        '--limit <n|default>',
        'requests per window; 0 for no limit; "default" for the server\'s RATE_LIMIT',
        // Commander takes a parser's null for "no value" and keeps the raw text, so "default" stays a word here.
        (v): number | 'default' => (v === 'default' ? v : int('--limit')(v)),
      )
      .option('--json', 'print JSON')
      .action(async (o) => {
        const limit = o.limit === 'default' ? null : o.limit;
        const set = await withDatabase(cli, (em) => setRateLimit(em, o.key, limit));
        const what =
          set.rateLimit === null ? "the server's default" : set.rateLimit === 0 ? 'no limit' : `${set.rateLimit}`;
        emit(cli.io, o.json, set, `account ${set.key}: rate limit ${what} per token`);
      }),
    'npm run cli -- account rate-limit --key acme --limit 600',
  );
  example(
    account
      .command('set-host')
      .description('move an account to another host: its conversation pages and every URL the API prints follow')
      .requiredOption('--key <key>', 'account key')
      .requiredOption('--host <origin>', "the account's own host, e.g. https://talk.acme.example.com")
      .option('--json', 'print JSON')
      .action(async (o) => {
        const set = await withDatabase(cli, (em) => setHost(em, o.key, o.host));
        emit(cli.io, o.json, set, `account ${set.key}: host ${set.host}`);
      }),
    'npm run cli -- account set-host --key acme --host https://talk.acme.example.com',
  );

  const token = program.command('token').description('manage API tokens');
  example(
    token
      .command('create')
      .description('issue a new API token for an account (shown once)')
      .requiredOption('--account <key>', 'account key')
      .option('--name <name>', 'what the token is for', 'default')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const issued = await withDatabase(cli, async (em) =>
          issueToken(em, (await findAccount(em, o.account)).id, o.name),
        );
        emit(
          cli.io,
          o.json,
          issued,
          `token ${issued.id} (${issued.name}) created\nAPI token (shown once): ${issued.token}`,
        );
      }),
    'npm run cli -- token create --account acme --name "zapier"',
  );
  example(
    token
      .command('revoke')
      .description('revoke a token; it stops working at once')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--id <id>', 'token id (see token list)', int('--id'))
      .option('--json', 'print JSON')
      .action(async (o) => {
        const revoked = await withDatabase(cli, async (em) =>
          revokeToken(em, (await findAccount(em, o.account)).id, o.id),
        );
        emit(cli.io, o.json, revoked, `token ${revoked.id} (${revoked.name}) revoked`);
      }),
    'npm run cli -- token revoke --account acme --id 3',
  );
  example(
    token
      .command('list')
      .description("list an account's tokens (never their secret)")
      .requiredOption('--account <key>', 'account key')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const tokens = await withDatabase(cli, async (em) => listTokens(em, (await findAccount(em, o.account)).id));
        const lines = tokens.map(
          (t) =>
            `${t.id}\t${t.hint}…\t${t.name}\t${t.revokedAt ? 'revoked' : 'active'}\tlast used ${t.lastUsedAt?.toISOString() ?? 'never'}`,
        );
        emit(cli.io, o.json, tokens, lines.join('\n') || 'no tokens');
      }),
    'npm run cli -- token list --account acme',
  );

  const user = program.command('user').description("manage account users and the account's team");
  example(
    user
      .command('add')
      .description('add a user to an account: a participant, or on its team with --team')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--email <email>', 'e-mail address')
      .requiredOption('--name <name>', 'display name')
      .addOption(new Option('--team <role>', "their place on the account's team").choices(TEAM_ROLES))
      .option('--json', 'print JSON')
      .action(async (o) => {
        const added = await withDatabase(cli, async (em) =>
          addUser(em, (await findAccount(em, o.account)).id, { email: o.email, name: o.name, team: o.team }),
        );
        emit(
          cli.io,
          o.json,
          added,
          `user ${added.id} <${added.email}> added${added.team ? ` to the team as ${added.team}` : ''}`,
        );
      }),
    'npm run cli -- user add --account acme --email sam@acme.example --name "Sam" --team member',
  );
  example(
    user
      .command('team')
      .description(
        "put someone on the account's team with a role (a new address becomes a user, and is mailed where " +
          'to sign in), change their role, or take them off it (--role none): the rules of the team page and ' +
          'of update_team_member',
      )
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--email <email>', "the person's e-mail address")
      .option('--name <name>', 'their name, for someone new to the account')
      .addOption(
        new Option('--role <role>', 'the role (none: off the team)')
          .choices([...TEAM_ROLES, 'none'])
          .makeOptionMandatory(),
      )
      .option('--json', 'print JSON')
      .action(async (o) => {
        const role = o.role === 'none' ? null : o.role;
        const set = await withDatabase(cli, async (em) =>
          updateTeamMember(
            { teamStore: new PgTeamStore(em), outbox: new PgMailOutbox(em) },
            await findAccount(em, o.account),
            'account',
            { email: o.email, name: o.name, role },
          ),
        );
        emit(
          cli.io,
          o.json,
          set,
          `${set.role ? `${set.email} is on the team as ${set.role}` : `${set.email} is off the team`}${
            set.mailed ? ' (mailed where to sign in)' : ''
          }`,
        );
      }),
    'npm run cli -- user team --account acme --email sam@acme.example --role admin',
  );

  const member = program.command('member').description("add people to a conversation's members, or take them out");
  /** The domain's own use cases on this database: the same rules, change marks and invitation mail as the API's. */
  const memberDeps = (em: EntityManager) => ({ members: memberStore(em), outbox: new PgMailOutbox(em) });
  const memberOutcome = (outcome: MemberOutcome) => {
    if (outcome.kind === 'not_found') throw new AdminError('the account has no conversation with that slug');
    if (outcome.kind === 'refused') throw new AdminError(outcome.problem);
    return { slug: outcome.change.slug, userId: outcome.change.person?.id ?? null, changed: outcome.change.changed };
  };
  example(
    member
      .command('add')
      .description('add a person by e-mail (made with --name if the address is new) and tell them by mail')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--slug <slug>', "the conversation's slug")
      .requiredOption('--email <email>', "the person's e-mail address")
      .option('--name <name>', 'their name, when the address is new to the account')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const done = await withDatabase(cli, async (em) =>
          memberOutcome(
            await addConversationMember(memberDeps(em), await findAccount(em, o.account), {
              slug: o.slug,
              email: o.email,
              name: o.name,
            }),
          ),
        );
        emit(
          cli.io,
          o.json,
          done,
          done.changed ? `${o.email} added to ${done.slug}` : `${o.email} was already a member`,
        );
      }),
    'npm run cli -- member add --account acme --slug billing-question --email sam@example.org --name "Sam"',
  );
  example(
    member
      .command('remove')
      .description("take a person out of a conversation's members (their messages stay)")
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--slug <slug>', "the conversation's slug")
      .requiredOption('--email <email>', "the person's e-mail address")
      .option('--json', 'print JSON')
      .action(async (o) => {
        const done = await withDatabase(cli, async (em) =>
          memberOutcome(
            await removeConversationMember(memberDeps(em), await findAccount(em, o.account), {
              slug: o.slug,
              email: o.email,
            }),
          ),
        );
        emit(
          cli.io,
          o.json,
          done,
          done.changed ? `${o.email} taken out of ${done.slug}` : `${o.email} was not a member`,
        );
      }),
    'npm run cli -- member remove --account acme --slug billing-question --email sam@example.org',
  );

  const workflow = program.command('workflow').description('manage workflows (the API: /workflows)');
  const stepsHelp = 'JSON array of steps, each {"trigger": {...}, "action": {...}} (docs/workflows.md)';
  example(
    workflow
      .command('create')
      .description('save a workflow, by the rules the API saves one with')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--name <name>', 'workflow name')
      .requiredOption('--steps <json>', stepsHelp, jsonArray)
      .option('--json', 'print JSON')
      .action(async (o) => {
        const made = await withDatabase(cli, async (em) =>
          createWorkflow(em, (await findAccount(em, o.account)).id, { name: o.name, steps: o.steps }),
        );
        emit(cli.io, o.json, made, `workflow ${made.id} (${made.name}) created`);
      }),
    `npm run cli -- workflow create --account acme --name Welcome --steps '[{"trigger":{"type":"conversation.created"},"action":{"type":"post_message","as":"sam@acme.example","text":"Thanks! We answer within a day."}}]'`,
  );
  example(
    workflow
      .command('list')
      .description("the account's workflows, disabled ones included")
      .requiredOption('--account <key>', 'account key')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const all = await withDatabase(cli, async (em) =>
          listWorkflows(new PgWorkflowStore(em), await findAccount(em, o.account)),
        );
        emit(
          cli.io,
          o.json,
          all,
          all.length === 0
            ? 'no workflows'
            : all.map((w) => `${w.id}\t${w.name}\t${w.steps.length} steps${w.disabled ? '\tdisabled' : ''}`).join('\n'),
        );
      }),
    'npm run cli -- workflow list --account acme',
  );
  example(
    workflow
      .command('change')
      .description('change a workflow (conversations keep the copies they have), or disable or enable it')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--id <id>', 'workflow id', int('--id'))
      .option('--name <name>', 'new name')
      .option('--steps <json>', stepsHelp, jsonArray)
      .option('--disable', 'stop applying it to new conversations')
      .option('--enable', 'apply it again')
      .option('--json', 'print JSON')
      .action(async (o) => {
        if (o.disable && o.enable) throw new AdminError('give --disable or --enable, not both');
        const changed = await withDatabase(cli, async (em) =>
          changeWorkflow(
            new PgWorkflowStore(em),
            await findAccount(em, o.account),
            o.id,
            {
              name: o.name,
              steps: o.steps,
              disabled: o.disable ? true : o.enable ? false : undefined,
            },
            'account',
          ),
        );
        emit(
          cli.io,
          o.json,
          changed,
          `workflow ${changed.id} (${changed.name}) ${changed.disabled ? 'disabled' : 'saved'}`,
        );
      }),
    'npm run cli -- workflow change --account acme --id 1 --disable',
  );

  const intake = program.command('intake-page').description('manage intake pages (the API: /intake_pages)');
  const pageText = (o: Record<string, unknown>) =>
    `intake page ${o.id} (${o.name}, /p/${o.key}${o.primary ? ', primary' : ''}${o.disabled ? ', disabled' : ''})`;
  const teamList = (value: string) =>
    value
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e.length > 0);
  example(
    intake
      .command('create')
      .description('make an intake page; making one primary makes the last primary page not')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--name <name>', 'page name')
      .option('--key <key>', 'its address, /p/<key> (default: made from the name)')
      .option('--title <title>', 'shown above the form')
      .option('--welcome <text>', 'welcome text shown above the form')
      .option('--conversation-title <pattern>', 'how its conversations are titled: {name}, {words}, {page}, {date}')
      .option('--primary', 'make it the primary intake page')
      .option('--anonymous', 'let visitors start without a name and an e-mail address')
      .option('--team <emails>', 'comma-separated team members who join each conversation started there', teamList)
      .option('--workflow <id>', 'workflow applied to conversations created through it', int('--workflow'))
      .option('--json', 'print JSON')
      .action(async (o) => {
        const made = await withDatabase(cli, async (em) =>
          createIntakePage(em, (await findAccount(em, o.account)).id, {
            name: o.name,
            key: o.key,
            title: o.title,
            welcomeText: o.welcome,
            conversationTitle: o.conversationTitle,
            primary: o.primary === true,
            allowAnonymous: o.anonymous === true,
            team: o.team,
            workflowId: o.workflow,
          }),
        );
        emit(cli.io, o.json, made, `${pageText(made)} created`);
      }),
    'npm run cli -- intake-page create --account acme --name "Contact us" --primary --workflow 1 --team sam@acme.example',
  );
  example(
    intake
      .command('list')
      .description("the account's intake pages, disabled ones included")
      .requiredOption('--account <key>', 'account key')
      .option('--json', 'print JSON')
      .action(async (o) => {
        const all = await withDatabase(cli, async (em) =>
          listIntakePages(new PgIntakePageAdminStore(em), await findAccount(em, o.account)),
        );
        emit(cli.io, o.json, all, all.length === 0 ? 'no intake pages' : all.map(pageText).join('\n'));
      }),
    'npm run cli -- intake-page list --account acme',
  );
  example(
    intake
      .command('change')
      .description('change an intake page, or disable or enable it')
      .requiredOption('--account <key>', 'account key')
      .requiredOption('--id <id>', 'intake page id', int('--id'))
      .option('--name <name>', 'new name')
      .option('--key <key>', 'new address, /p/<key>')
      .option('--title <title>', 'shown above the form')
      .option('--welcome <text>', 'welcome text')
      .option('--conversation-title <pattern>', 'how its conversations are titled: {name}, {words}, {page}, {date}')
      .option(
        '--welcome-recording <message id>',
        'a message whose recording is shown above the form (0: none)',
        int('--welcome-recording'),
      )
      .option('--primary', 'make it the primary intake page')
      .option('--workflow <id>', 'workflow applied (0: none)', int('--workflow'))
      .option('--team <emails>', 'comma-separated team members (empty: none)', teamList)
      .option('--anonymous <yes|no>', 'let visitors start without a name and an e-mail address')
      .option('--disable', 'make it unusable, as a missing page is')
      .option('--enable', 'make it usable again')
      .option('--json', 'print JSON')
      .action(async (o) => {
        if (o.disable && o.enable) throw new AdminError('give --disable or --enable, not both');
        if (o.anonymous !== undefined && o.anonymous !== 'yes' && o.anonymous !== 'no') {
          throw new AdminError('--anonymous takes yes or no');
        }
        const changed = await withDatabase(cli, async (em) =>
          changeIntakePage(
            new PgIntakePageAdminStore(em),
            await findAccount(em, o.account),
            o.id,
            {
              name: o.name,
              key: o.key,
              title: o.title,
              welcome_text: o.welcome,
              conversation_title: o.conversationTitle,
              welcome_recording_message_id:
                o.welcomeRecording === undefined ? undefined : o.welcomeRecording === 0 ? null : o.welcomeRecording,
              primary: o.primary === true ? true : undefined,
              workflow_id: o.workflow === undefined ? undefined : o.workflow === 0 ? null : o.workflow,
              team: o.team,
              allow_anonymous: o.anonymous === undefined ? undefined : o.anonymous === 'yes',
              disabled: o.disable ? true : o.enable ? false : undefined,
            },
            'account',
          ),
        );
        emit(cli.io, o.json, changed, `${pageText(changed)} saved`);
      }),
    'npm run cli -- intake-page change --account acme --id 2 --disable',
  );

  example(
    program
      .command('seed')
      .description('load a JSON seed file, streamed (format: README, examples/seed.json); all of it or, on error, none')
      .argument('<file>', 'path to the seed file')
      .option(
        '--emit-events',
        "announce the loaded conversations and messages to the accounts' webhook endpoints (conversation_created, message_created)",
      )
      .option('--json', 'print JSON (and no progress)')
      .action(async (file: string, o: { json?: boolean; emitEvents?: boolean }) => {
        let size: number;
        try {
          size = statSync(file).size;
        } catch (e) {
          throw new AdminError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
        const progress = seedProgress(cli.io.stderr, size, o.json === true);
        const started = performance.now();
        const media = await configuredMedia(cli.settings().config);
        // The recordings kept for this load: removed again if it fails, as the database forgets it.
        const kept: string[] = [];
        const result = await withDatabase(cli, (em) =>
          loadSeedAccounts(em, readSeedFile(file, progress.bytes), {
            onProgress: progress.update,
            emitEvents: o.emitEvents === true,
            webhookTargets: webhookTargets(cli.settings().config.webhooks),
            media: importRecordings(media, file, kept),
          }),
        )
          .catch(async (e: unknown) => {
            await Promise.all(kept.map((key) => media.store.remove(key).catch(() => undefined)));
            throw e;
          })
          .finally(() => progress.stop());
        const seconds = (performance.now() - started) / 1000;
        const c = result.counts;
        const tokens = result.accounts.flatMap((a) => a.tokens.map((t) => `  ${a.key}: ${t.token}`));
        const hooks = result.accounts.flatMap((a) =>
          a.webhooks.map((w) => `  ${a.key}: webhook ${w.id} ${w.url}  signing secret ${w.secret}`),
        );
        emit(
          cli.io,
          o.json,
          { ...result, seconds },
          `loaded ${c.accounts} accounts, ${c.users} users, ${c.conversations} conversations, ${c.messages} messages, ${c.tags} tags in ${seconds.toFixed(1)}s (${Math.round(c.conversations / Math.max(seconds, 0.001))} conversations/s)\nAPI tokens (shown once):\n${tokens.join('\n')}${hooks.length > 0 ? `\nwebhook endpoints (secrets shown once${o.emitEvents ? '; the loaded data is announced to them' : ''}):\n${hooks.join('\n')}` : ''}`,
        );
      }),
    "npm run cli -- seed examples/seed.json   (add --emit-events to announce it to the seed's webhook endpoints)",
  );
}
