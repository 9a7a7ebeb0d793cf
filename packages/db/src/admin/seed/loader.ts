import {
  createWebhook,
  DomainError,
  type SubscribedWebhookView,
  safeMessageHtml,
  type WebhookTargets,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { z } from 'zod';
import { query } from '../../repositories/sql.ts';
import { PgWebhookEndpointStore } from '../../repositories/webhook-endpoint-store.ts';
import { AdminError } from '../errors.ts';
import {
  createAccountWithoutToken,
  createIntakePage,
  createWorkflow,
  type IssuedToken,
  issueToken,
  recordDisabledWorkflow,
} from '../operations.ts';
import { ensureUsers } from './append.ts';
import {
  parse,
  type TSeed,
  type TSeedAccountHeader,
  type TSeedConversation,
  ZSeedAccountHeader,
  ZSeedConversation,
} from './format.ts';
import {
  type AccountRefs,
  type BatchOptions,
  ensureTags,
  type LoadedAccount,
  loadBatch,
  Named,
  type SeedCounts,
} from './writer.ts';

/*
 * The loader: an account's header (users, tokens, workflows, intake pages), then its
 * conversations in batches through the bulk writer, all inside one transaction.
 */

/** Conversations written per round of statements (one statement per table per batch). */
export const SEED_BATCH = 2_000;

async function loadHeader(
  em: EntityManager,
  header: TSeedAccountHeader,
): Promise<{ refs: AccountRefs; tokens: IssuedToken[] }> {
  const ownerSpec = header.owner === undefined ? undefined : header.users.find((u) => u.email === header.owner);
  if (header.owner !== undefined && !ownerSpec) {
    throw new AdminError(`account ${header.key}: owner ${header.owner} is not among its users`);
  }
  // Users are written in the file's order, the owner among them: they get ascending ids, the order
  // in which the API lists a conversation's users (an export lists them so too).
  const created = await createAccountWithoutToken(em, {
    key: header.key,
    name: header.name,
    host: header.host,
    titleTemplate: header.title_template,
    defaults: {
      anyoneCanPost: header.defaults.anyone_can_post,
      allowAnonymousMessages: header.defaults.allow_anonymous_messages,
      allowSearchEngines: header.defaults.allow_search_engines,
    },
  });
  const emails = header.users.map((u) => u.email.toLowerCase());
  if (new Set(emails).size !== emails.length) {
    throw new AdminError(`account ${header.key}: an e-mail appears twice among its users (ignoring case)`);
  }
  const users = new Map<string, number>();
  // The owner is on the team as its owner, whatever the file says of them.
  await ensureUsers(
    em,
    { id: created.id, users },
    header.users.map((u) => (u === ownerSpec ? { ...u, team: 'owner' as const } : u)),
  );
  const owner: AccountRefs['owner'] = ownerSpec
    ? { id: users.get(ownerSpec.email.toLowerCase()) as number, email: ownerSpec.email, name: ownerSpec.name }
    : null;
  if (owner !== null || header.rate_limit !== null) {
    await query(em, 'update account set owner_id = ?, rate_limit = ? where id = ?', [
      owner?.id ?? null,
      header.rate_limit,
      created.id,
    ]);
  }

  // The file's tokens, or one made for the account (shown once).
  const tokens: IssuedToken[] = [];
  for (const t of header.tokens ?? [{ name: 'seed', token: undefined }]) {
    tokens.push(await issueToken(em, created.id, t.name, t.token));
  }

  const workflows: AccountRefs['workflows'] = new Named('workflow');
  const disabled = new Set<number>();
  for (const w of header.workflows) {
    const made = w.disabled
      ? await recordDisabledWorkflow(em, created.id, { name: w.name, steps: w.steps })
      : await createWorkflow(em, created.id, { name: w.name, steps: w.steps });
    if (w.disabled) disabled.add(made.id);
    workflows.add(w.name, made);
  }
  const intakePages: AccountRefs['intakePages'] = new Named('intake page');
  for (const page of header.intake_pages) {
    const where = `account ${header.key}, intake page ${page.name}`;
    const workflow = page.workflow === undefined ? null : workflows.get(page.workflow, where);
    const made = await createIntakePage(em, created.id, {
      name: page.name,
      primary: page.primary,
      workflowId: workflow?.id,
      key: page.key,
      title: page.title,
      welcomeText: page.welcome_text,
      conversationTitle: page.conversation_title,
      allowAnonymous: page.allow_anonymous,
      team: page.team,
      disabled: page.disabled,
    });
    // A disabled workflow is copied onto nothing new (as the intake page store reads it).
    const applied = workflow && !disabled.has(workflow.id) ? workflow : null;
    intakePages.add(page.name, { id: made.id, primary: made.primary, workflow: applied });
  }
  const tags: AccountRefs['tags'] = new Map();
  return {
    refs: {
      id: created.id,
      titleTemplate: header.title_template,
      defaults: {
        anyoneCanPost: header.defaults.anyone_can_post,
        allowAnonymousMessages: header.defaults.allow_anonymous_messages,
        allowSearchEngines: header.defaults.allow_search_engines,
      },
      owner,
      users,
      workflows,
      intakePages,
      tags,
      templates: new Map(),
    },
    tokens,
  };
}

export interface SeedProgress {
  account: string;
  counts: SeedCounts;
}

/**
 * Loads one account and its conversations, in batches, inside the caller's transaction.
 * `conversations` may be any (async) iterable, so a large file can be streamed through.
 */
export interface SeedOptions extends BatchOptions {
  onProgress?: (p: SeedProgress) => void;
  /** Where a seed's webhook endpoints may point (the server's policy); needed only when it has some. */
  webhookTargets?: WebhookTargets;
}

/** Subscribes the account's endpoints through the same use case as the API and the CLI. */
async function subscribeSeedWebhooks(
  em: EntityManager,
  accountId: number,
  header: TSeedAccountHeader,
  targets: WebhookTargets | undefined,
): Promise<SubscribedWebhookView[]> {
  if (header.webhooks.length === 0) return [];
  if (!targets) throw new AdminError(`account ${header.key}: webhooks need the server's target policy`);
  const services = { webhookEndpoints: new PgWebhookEndpointStore(em), webhookTargets: targets };
  const made: SubscribedWebhookView[] = [];
  for (const w of header.webhooks) {
    try {
      made.push(await createWebhook(services, { id: accountId }, w));
    } catch (e) {
      if (e instanceof DomainError) throw new AdminError(`account ${header.key}, webhook ${w.url}: ${e.message}`);
      throw e;
    }
  }
  return made;
}

/** The account's message templates, each with its recording kept and measured as a message's is. */
async function loadTemplates(
  em: EntityManager,
  refs: AccountRefs,
  header: TSeedAccountHeader,
  media: SeedOptions['media'],
): Promise<void> {
  for (const t of header.message_templates) {
    const where = `account ${header.key}, message template ${t.name}`;
    if (refs.templates.has(t.name.toLowerCase())) throw new AdminError(`${where}: the name appears twice`);
    if (t.text.trim() === '' && t.media_file === undefined) throw new AdminError(`${where}: no text and no recording`);
    if (t.media_file !== undefined && !media) throw new AdminError(`${t.media_file}: this load takes no media files`);
    const kept = t.media_file === undefined || !media ? null : await media(t.media_file, t.type, refs.id);
    const creator = t.creator === undefined ? null : refs.users.get(t.creator.toLowerCase());
    if (creator === undefined) throw new AdminError(`${where}: ${t.creator} is not a user of the account`);
    const [row] = await query<{ id: number }>(
      em,
      `insert into message_template (account_id, name, text, format, creator_id, message_type, recorded_duration_seconds,
         media_key, media_content_type, media_bytes)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) returning id`,
      [
        refs.id,
        t.name,
        // HTML brought in is held to the same subset as the API's, whatever the file says.
        t.format === 'html' ? safeMessageHtml(t.text) : t.text,
        t.format,
        creator,
        kept?.kind ?? 'text',
        kept?.seconds ?? 0,
        kept?.key ?? null,
        kept?.contentType ?? null,
        kept?.bytes ?? null,
      ],
    );
    refs.templates.set(t.name.toLowerCase(), Number(row?.id));
  }
}

export async function loadSeedAccount(
  em: EntityManager,
  headerInput: unknown,
  conversations: AsyncIterable<unknown> | Iterable<unknown>,
  counts: SeedCounts,
  { onProgress, webhookTargets, ...batchOptions }: SeedOptions = {},
): Promise<LoadedAccount> {
  const header = parse(ZSeedAccountHeader, headerInput, 'account');
  const { refs, tokens } = await loadHeader(em, header);
  const webhooks = await subscribeSeedWebhooks(em, refs.id, header, webhookTargets);
  await loadTemplates(em, refs, header, batchOptions.media);
  counts.accounts += 1;
  counts.users += refs.users.size;
  counts.tags += await ensureTags(em, refs, header.tags);
  let batch: TSeedConversation[] = [];
  let n = 0;
  for await (const c of conversations) {
    n += 1;
    batch.push(parse(ZSeedConversation, c, `account ${header.key}, conversation ${n}`));
    if (batch.length >= SEED_BATCH) {
      await loadBatch(em, refs, batch, counts, batchOptions);
      batch = [];
      onProgress?.({ account: header.key, counts });
    }
  }
  if (batch.length > 0) await loadBatch(em, refs, batch, counts, batchOptions);
  onProgress?.({ account: header.key, counts });
  return {
    key: header.key,
    id: refs.id,
    tokens,
    webhooks: webhooks.map((w) => ({ id: w.id, url: w.url, events: w.events, secret: w.secret })),
  };
}

/** One account of a seed: its own members, then its conversations (possibly streamed). */
export interface SeedAccountSource {
  header: unknown;
  conversations: AsyncIterable<unknown> | Iterable<unknown>;
}

/**
 * Loads accounts in one transaction: all of them, or (on any error) none. The accounts may come
 * from a parsed object (loadSeed) or be streamed from a file, one after the other.
 */
export async function loadSeedAccounts(
  em: EntityManager,
  sources: AsyncIterable<SeedAccountSource> | Iterable<SeedAccountSource>,
  options: SeedOptions = {},
) {
  const counts: SeedCounts = { accounts: 0, users: 0, conversations: 0, messages: 0, tags: 0 };
  const accounts = await em.transactional(async (tx) => {
    const loaded: LoadedAccount[] = [];
    for await (const { header, conversations } of sources) {
      loaded.push(await loadSeedAccount(tx, header, conversations, counts, options));
    }
    return loaded;
  });
  return { counts, accounts };
}

/** Loads a whole parsed seed in one transaction. */
export async function loadSeed(em: EntityManager, input: TSeed, options: SeedOptions = {}) {
  const seed = parse(
    z.strictObject({
      comment: z.string().optional(),
      accounts: z.array(z.looseObject({ conversations: z.array(z.unknown()).default([]) })),
    }),
    input,
    'seed',
  );
  const sources = seed.accounts.map(({ conversations, ...header }) => ({ header, conversations }));
  return loadSeedAccounts(em, sources, options);
}
