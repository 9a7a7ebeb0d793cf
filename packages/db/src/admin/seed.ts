import {
  type AccountContext,
  DEFAULT_TITLE_TEMPLATE,
  draftConversation,
  type IntakePageRecord,
  SLUG_MAX_LENGTH,
  SLUG_PATTERN,
  TITLE_MAX_LENGTH,
  titleKey,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { z } from 'zod';
import { SLUG_UNIQUE_INDEX } from '../entities/index.ts';
import { query } from '../repositories/sql.ts';
import { AdminError } from './errors.ts';
import { createAccount, createIntakePage, createWorkflow, type IssuedToken, issueToken } from './operations.ts';

/* The seed file format; the README describes it and examples/seed.json shows it whole. */

/** JS reads at most milliseconds; the database gets the full string, microseconds and all. */
const seedDate = (s: string): Date => new Date(Date.parse(s.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1')));

/** ISO 8601 with an offset; up to 6 fractional digits survive into the database. */
const ZTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:?\d{2})$/, 'an ISO 8601 time with offset')
  .refine((s) => !Number.isNaN(seedDate(s).getTime()), 'a real time');

export const ZSeedMessage = z.strictObject({
  /** E-mail of one of the account's users, or null for an anonymous author. */
  author: z.string().nullable().default(null),
  text: z.string().default(''),
  type: z.string().min(1).max(32).default('text'),
  recorded_duration_seconds: z.number().int().min(0).max(2_147_483_647).default(0),
  download_media_url: z.string().nullable().default(null),
  created_at: ZTimestamp.optional(),
});

export const ZSeedConversation = z.strictObject({
  title: z.string().min(1).max(TITLE_MAX_LENGTH).optional(),
  slug: z.string().max(SLUG_MAX_LENGTH).regex(SLUG_PATTERN).optional(),
  anyone_can_post: z.boolean().optional(),
  allow_anonymous_messages: z.boolean().optional(),
  allow_search_engines: z.boolean().optional(),
  /** Name of one of the account's intake pages; the primary one sets via_primary_intake_page. */
  intake_page: z.string().optional(),
  created_at: ZTimestamp.optional(),
  /** E-mails of members; omitted, the owner alone (as the API does). */
  members: z.array(z.string()).optional(),
  tags: z.array(z.string().min(1).max(100)).default([]),
  messages: z.array(ZSeedMessage).default([]),
});

export const ZSeedAccountHeader = z.strictObject({
  key: z.string(),
  name: z.string(),
  host: z.string(),
  title_template: z.string().default(DEFAULT_TITLE_TEMPLATE),
  defaults: z
    .strictObject({
      anyone_can_post: z.boolean().default(true),
      allow_anonymous_messages: z.boolean().default(true),
      allow_search_engines: z.boolean().default(true),
    })
    .prefault({}),
  /** E-mail of the user who owns the account and joins each new conversation. */
  owner: z.string().optional(),
  users: z.array(z.strictObject({ email: z.string(), name: z.string() })).default([]),
  /** Tokens to install as given (for scripted set-ups); omitted, one is generated and reported. */
  tokens: z.array(z.strictObject({ name: z.string(), token: z.string().min(20).max(512) })).optional(),
  workflows: z.array(z.strictObject({ name: z.string(), steps: z.array(z.unknown()) })).default([]),
  intake_pages: z
    .array(z.strictObject({ name: z.string(), primary: z.boolean().default(false), workflow: z.string().optional() }))
    .default([]),
});

export const ZSeedAccount = ZSeedAccountHeader.extend({ conversations: z.array(ZSeedConversation).default([]) });
export const ZSeed = z.strictObject({ accounts: z.array(ZSeedAccount) });

export type TSeed = z.input<typeof ZSeed>;
type TSeedAccountHeader = z.infer<typeof ZSeedAccountHeader>;
type TSeedConversation = z.infer<typeof ZSeedConversation>;

/** Parses one part of a seed, naming where it is when it is wrong. */
function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new AdminError(`${where}: ${z.prettifyError(result.error).replaceAll('\n', ' ')}`);
  return result.data;
}

export interface SeedCounts {
  accounts: number;
  users: number;
  conversations: number;
  messages: number;
  tags: number;
}

export interface LoadedAccount {
  key: string;
  id: number;
  tokens: IssuedToken[];
}

/** Conversations written per round of statements (one statement per table per batch). */
export const SEED_BATCH = 2_000;

interface AccountRefs extends Pick<AccountContext, 'titleTemplate' | 'defaults' | 'owner'> {
  id: number;
  users: Map<string, number>;
  intakePages: Map<string, IntakePageRecord>;
  tags: Map<string, number>;
}

async function loadHeader(
  em: EntityManager,
  header: TSeedAccountHeader,
): Promise<{ refs: AccountRefs; tokens: IssuedToken[] }> {
  const ownerSpec = header.owner === undefined ? undefined : header.users.find((u) => u.email === header.owner);
  if (header.owner !== undefined && !ownerSpec) {
    throw new AdminError(`account ${header.key}: owner ${header.owner} is not among its users`);
  }
  const created = await createAccount(
    em,
    {
      key: header.key,
      name: header.name,
      host: header.host,
      owner: ownerSpec,
      titleTemplate: header.title_template,
      defaults: {
        anyoneCanPost: header.defaults.anyone_can_post,
        allowAnonymousMessages: header.defaults.allow_anonymous_messages,
        allowSearchEngines: header.defaults.allow_search_engines,
      },
    },
    'seed',
  );
  const users = new Map<string, number>();
  if (created.owner) users.set(created.owner.email.toLowerCase(), created.owner.id);
  const others = header.users.filter((u) => u !== ownerSpec);
  if (others.length > 0) {
    const rows = await query<{ id: number; email: string }>(
      em,
      `insert into account_user (account_id, email, name)
       select ?, email, name from jsonb_to_recordset(?::jsonb) as t(email text, name text) returning id, email`,
      [created.id, JSON.stringify(others)],
    );
    for (const r of rows) users.set(r.email.toLowerCase(), r.id);
  }

  let tokens: IssuedToken[] = [created.token];
  if (header.tokens) {
    await query(em, 'delete from api_token where id = ?', [created.token.id]);
    tokens = [];
    for (const t of header.tokens) tokens.push(await issueToken(em, created.id, t.name, t.token));
  }

  const workflows = new Map<string, { id: number; name: string; steps: unknown[] }>();
  for (const w of header.workflows) workflows.set(w.name, await createWorkflow(em, created.id, w));
  const intakePages: AccountRefs['intakePages'] = new Map();
  for (const page of header.intake_pages) {
    const workflow = page.workflow === undefined ? null : workflows.get(page.workflow);
    if (workflow === undefined) throw new AdminError(`intake page ${page.name}: no workflow ${page.workflow}`);
    const made = await createIntakePage(em, created.id, {
      name: page.name,
      primary: page.primary,
      workflowId: workflow?.id,
    });
    intakePages.set(page.name, { id: made.id, primary: made.primary, workflow });
  }
  return {
    refs: {
      id: created.id,
      titleTemplate: header.title_template,
      defaults: {
        anyoneCanPost: header.defaults.anyone_can_post,
        allowAnonymousMessages: header.defaults.allow_anonymous_messages,
        allowSearchEngines: header.defaults.allow_search_engines,
      },
      owner: created.owner,
      users,
      intakePages,
      tags: new Map(),
    },
    tokens,
  };
}

function userId(refs: AccountRefs, email: string, where: string): number {
  const id = refs.users.get(email.toLowerCase());
  if (id === undefined) throw new AdminError(`${where}: ${email} is not a user of the account`);
  return id;
}

async function ensureTags(em: EntityManager, refs: AccountRefs, names: Iterable<string>): Promise<number> {
  const missing = [...new Set([...names].filter((n) => !refs.tags.has(n.toLowerCase())))];
  if (missing.length === 0) return 0;
  const rows = await query<{ id: number; name: string }>(
    em,
    'insert into tag (account_id, name) select ?, n from jsonb_array_elements_text(?::jsonb) as t(n) returning id, name',
    [refs.id, JSON.stringify(missing)],
  );
  for (const r of rows) refs.tags.set(r.name.toLowerCase(), r.id);
  return rows.length;
}

/** Writes `rows` with one statement whose parameters are the account id and the rows as JSON. */
async function insertRows(em: EntityManager, accountId: number, rows: object[], sql: string): Promise<void> {
  if (rows.length > 0) await query(em, sql, [accountId, JSON.stringify(rows)]);
}

async function loadBatch(em: EntityManager, refs: AccountRefs, batch: TSeedConversation[], counts: SeedCounts) {
  counts.tags += await ensureTags(
    em,
    refs,
    batch.flatMap((c) => c.tags),
  );
  const ids = (
    await query<{ id: number }>(em, "select nextval('conversation_id_seq')::int as id from generate_series(1, ?)", [
      batch.length,
    ])
  ).map((r) => r.id);

  const conversations: object[] = [];
  const members: { c: number; u: number }[] = [];
  const tags: { c: number; t: number }[] = [];
  const messages: object[] = [];
  batch.forEach((c, i) => {
    const id = ids[i] as number;
    const where = `conversation ${c.slug ?? c.title ?? `#${counts.conversations + i + 1}`}`;
    const page = c.intake_page === undefined ? null : refs.intakePages.get(c.intake_page);
    if (page === undefined) throw new AdminError(`${where}: no intake page ${c.intake_page}`);
    const draft = draftConversation(
      refs,
      {
        title: c.title,
        slug: c.slug,
        anyoneCanPost: c.anyone_can_post,
        allowAnonymousMessages: c.allow_anonymous_messages,
        allowSearchEngines: c.allow_search_engines,
        memberIds: c.members?.map((e) => userId(refs, e, where)),
      },
      page,
      c.created_at ? seedDate(c.created_at) : new Date(),
    );
    conversations.push({
      id,
      title: draft.title,
      title_key: titleKey(draft.title),
      slug: draft.slug,
      anyone_can_post: draft.anyoneCanPost,
      allow_anonymous_messages: draft.allowAnonymousMessages,
      allow_search_engines: draft.allowSearchEngines,
      via_primary_intake_page: draft.viaPrimaryIntakePage,
      intake_page_id: draft.intakePageId,
      workflow: draft.workflow,
      created_at: c.created_at ?? null,
    });
    for (const u of new Set(draft.memberIds)) members.push({ c: id, u });
    for (const t of new Set(c.tags.map((n) => refs.tags.get(n.toLowerCase()) as number))) tags.push({ c: id, t });
    for (const m of c.messages) {
      messages.push({
        c: id,
        type: m.type,
        duration: m.recorded_duration_seconds,
        author: m.author === null ? null : userId(refs, m.author, where),
        anonymous: m.author === null,
        text: m.text,
        media: m.download_media_url,
        created_at: m.created_at ?? c.created_at ?? null,
      });
    }
  });

  // Each batch travels as one JSON parameter per table, spread into rows by jsonb_to_recordset.
  try {
    await insertRows(
      em,
      refs.id,
      conversations,
      `insert into conversation (id, account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages,
         allow_search_engines, via_primary_intake_page, intake_page_id, workflow, created_at)
       select id, ?, title, title_key, slug, anyone_can_post, allow_anonymous_messages, allow_search_engines,
         via_primary_intake_page, intake_page_id, workflow, coalesce(created_at, now())
       from jsonb_to_recordset(?::jsonb) as t(id int, title text, title_key text, slug text, anyone_can_post bool,
         allow_anonymous_messages bool, allow_search_engines bool, via_primary_intake_page bool, intake_page_id int,
         workflow jsonb, created_at timestamptz)`,
    );
  } catch (e) {
    if (e instanceof Error && e.message.includes(SLUG_UNIQUE_INDEX)) {
      throw new AdminError('a slug appears twice in the account (slugs are unique ignoring case)');
    }
    throw e;
  }
  await insertRows(
    em,
    refs.id,
    members,
    `insert into conversation_member (conversation_id, user_id, account_id)
     select c, u, ? from jsonb_to_recordset(?::jsonb) as t(c int, u int)`,
  );
  await insertRows(
    em,
    refs.id,
    tags,
    `insert into conversation_tag (conversation_id, tag_id, account_id)
     select c, t, ? from jsonb_to_recordset(?::jsonb) as x(c int, t int)`,
  );
  await insertRows(
    em,
    refs.id,
    messages,
    `insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous,
       text, download_media_url, created_at)
     select ?, c, type, duration, author, anonymous, text, media, coalesce(created_at, now())
     from jsonb_to_recordset(?::jsonb) as t(c int, type text, duration int, author int, anonymous bool, text text,
       media text, created_at timestamptz)`,
  );
  counts.conversations += batch.length;
  counts.messages += messages.length;
}

export interface SeedProgress {
  account: string;
  counts: SeedCounts;
}

/**
 * Loads one account and its conversations, in batches, inside the caller's transaction.
 * `conversations` may be any (async) iterable, so a large file can be streamed through.
 */
export async function loadSeedAccount(
  em: EntityManager,
  headerInput: unknown,
  conversations: AsyncIterable<unknown> | Iterable<unknown>,
  counts: SeedCounts,
  onProgress?: (p: SeedProgress) => void,
): Promise<LoadedAccount> {
  const header = parse(ZSeedAccountHeader, headerInput, 'account');
  const { refs, tokens } = await loadHeader(em, header);
  counts.accounts += 1;
  counts.users += refs.users.size;
  let batch: TSeedConversation[] = [];
  let n = 0;
  for await (const c of conversations) {
    n += 1;
    batch.push(parse(ZSeedConversation, c, `account ${header.key}, conversation ${n}`));
    if (batch.length >= SEED_BATCH) {
      await loadBatch(em, refs, batch, counts);
      batch = [];
      onProgress?.({ account: header.key, counts });
    }
  }
  if (batch.length > 0) await loadBatch(em, refs, batch, counts);
  onProgress?.({ account: header.key, counts });
  return { key: header.key, id: refs.id, tokens };
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
  onProgress?: (p: SeedProgress) => void,
) {
  const counts: SeedCounts = { accounts: 0, users: 0, conversations: 0, messages: 0, tags: 0 };
  const accounts = await em.transactional(async (tx) => {
    const loaded: LoadedAccount[] = [];
    for await (const { header, conversations } of sources) {
      loaded.push(await loadSeedAccount(tx, header, conversations, counts, onProgress));
    }
    return loaded;
  });
  return { counts, accounts };
}

/** Loads a whole parsed seed in one transaction. */
export async function loadSeed(em: EntityManager, input: TSeed, onProgress?: (p: SeedProgress) => void) {
  const seed = parse(
    z.strictObject({ accounts: z.array(z.looseObject({ conversations: z.array(z.unknown()).default([]) })) }),
    input,
    'seed',
  );
  const sources = seed.accounts.map(({ conversations, ...header }) => ({ header, conversations }));
  return loadSeedAccounts(em, sources, onProgress);
}
