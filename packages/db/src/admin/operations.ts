import {
  type ConversationSettings,
  createIntakePage as createIntakePageChecked,
  createWorkflow as createWorkflowChecked,
  DEFAULT_TITLE_TEMPLATE,
  generateToken,
  isDomainError,
  runnableSteps,
  type TeamRole,
} from '@convo/domain';
import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/core';
import { Account, ApiToken, User } from '../entities/index.ts';
import { PgIntakePageAdminStore } from '../repositories/intake-page-admin-store.ts';
import { query } from '../repositories/sql.ts';
import { PgWorkflowStore } from '../repositories/workflow-store.ts';
import { hashToken } from '../tokens.ts';
import { AdminError } from './errors.ts';
import * as v from './validate.ts';

/*
 * What an operator does through the CLI: the API itself has no operations for accounts, tokens,
 * users, workflows or intake pages.
 */

export interface NewAccount {
  key: string;
  name: string;
  host: string;
  owner?: { email: string; name: string } | undefined;
  defaults?: Partial<ConversationSettings> | undefined;
  titleTemplate?: string | undefined;
}

export interface IssuedToken {
  id: number;
  name: string;
  /** Shown once; only its hash is stored. */
  token: string;
  hint: string;
}

async function flushUnique(em: EntityManager, what: string): Promise<void> {
  try {
    await em.flush();
  } catch (e) {
    if (e instanceof UniqueConstraintViolationException) throw new AdminError(`${what} already exists`);
    throw e;
  }
}

export async function findAccount(em: EntityManager, key: string) {
  const account = await em.findOne(Account, { key });
  if (!account) throw new AdminError(`no account with key ${JSON.stringify(key)}`);
  return account;
}

export async function issueToken(em: EntityManager, accountId: number, name: string, token = generateToken()) {
  const hint = token.slice(0, 8);
  const row = em.create(ApiToken, {
    account: em.getReference(Account, accountId),
    name: v.name('token name', name),
    tokenHash: hashToken(token),
    hint,
  });
  await flushUnique(em, 'that token');
  return { id: row.id, name: row.name, token, hint } satisfies IssuedToken;
}

/**
 * A new token named `name` in place of the account's others of that name, which stop working (the
 * demo's token, new on every start: a token printed by an earlier start is no key any more).
 */
export async function renewToken(em: EntityManager, accountId: number, name: string) {
  return em.transactional(async (tx) => {
    await tx.nativeUpdate(ApiToken, { account: accountId, name, revokedAt: null }, { revokedAt: new Date() });
    return issueToken(tx, accountId, name);
  });
}

/** An account's host names its site, so no two accounts may share one. */
async function refuseTakenHost(em: EntityManager, host: string, exceptId?: number): Promise<string> {
  const taken = await em.findOne(Account, { host, ...(exceptId ? { id: { $ne: exceptId } } : {}) });
  if (taken) throw new AdminError(`host ${host} already belongs to account ${JSON.stringify(taken.key)}`);
  return host;
}

/** An account (and its owner, if given) with no API token: for an importer that issues none. */
export async function createAccountWithoutToken(em: EntityManager, input: NewAccount) {
  return em.transactional(async (tx) => {
    const account = tx.create(Account, {
      key: v.accountKey(input.key),
      name: v.name('account name', input.name),
      host: await refuseTakenHost(tx, v.host(input.host)),
      defaultAnyoneCanPost: input.defaults?.anyoneCanPost ?? true,
      defaultAllowAnonymousMessages: input.defaults?.allowAnonymousMessages ?? true,
      defaultAllowSearchEngines: input.defaults?.allowSearchEngines ?? true,
      titleTemplate: v.titleTemplate(input.titleTemplate ?? DEFAULT_TITLE_TEMPLATE),
    });
    await flushUnique(tx, `an account with key ${JSON.stringify(input.key)}`);
    let owner: { id: number; email: string; name: string } | null = null;
    if (input.owner) {
      owner = await addUser(tx, account.id, { ...input.owner, team: 'owner' });
      account.owner = tx.getReference(User, owner.id);
      await tx.flush();
    }
    return { id: account.id, key: account.key, name: account.name, host: account.host, owner };
  });
}

/** An account with its first API token (named `tokenName`), shown once. */
export async function createAccount(em: EntityManager, input: NewAccount, tokenName = 'default') {
  return em.transactional(async (tx) => {
    const account = await createAccountWithoutToken(tx, input);
    return { ...account, token: await issueToken(tx, account.id, tokenName) };
  });
}

/** Moves an account to another host: its pages and every URL the API prints follow. */
export async function setHost(em: EntityManager, key: string, host: string) {
  const account = await findAccount(em, key);
  account.host = await refuseTakenHost(em, v.host(host), account.id);
  await em.flush();
  return { key: account.key, host: account.host };
}

/** Sets how many requests each of the account's tokens may make per window; null restores the server default, 0 lifts the limit. */
export async function setRateLimit(em: EntityManager, key: string, limit: number | null) {
  if (limit !== null && (!Number.isInteger(limit) || limit < 0 || limit > 1_000_000_000)) {
    throw new AdminError('the rate limit must be a whole number from 0 to 1000000000');
  }
  const account = await findAccount(em, key);
  account.rateLimit = limit;
  await em.flush();
  return { key: account.key, rateLimit: limit };
}

/** A user of the account: a participant, or on the team with `team`. */
export async function addUser(
  em: EntityManager,
  accountId: number,
  input: { email: string; name: string; team?: TeamRole | null | undefined },
) {
  const user = em.create(User, {
    account: em.getReference(Account, accountId),
    email: v.email(input.email),
    name: v.name('user name', input.name),
    teamRole: input.team ?? null,
  });
  await flushUnique(em, `a user with e-mail ${JSON.stringify(input.email)}`);
  return { id: user.id, email: user.email, name: user.name, team: user.teamRole };
}

export async function revokeToken(em: EntityManager, accountId: number, tokenId: number) {
  const token = await em.findOne(ApiToken, { id: tokenId, account: accountId });
  if (!token) throw new AdminError(`no token ${tokenId} in this account`);
  if (!token.revokedAt) {
    token.revokedAt = new Date();
    await em.flush();
  }
  return { id: token.id, name: token.name, revokedAt: token.revokedAt };
}

export async function listTokens(em: EntityManager, accountId: number) {
  const tokens = await em.find(ApiToken, { account: accountId }, { orderBy: { id: 'asc' } });
  return tokens.map((t) => ({
    id: t.id,
    name: t.name,
    hint: t.hint,
    createdAt: t.createdAt,
    lastUsedAt: t.lastUsedAt ?? null,
    revokedAt: t.revokedAt ?? null,
  }));
}

/**
 * A workflow, by the rules the API saves one with (its steps' form, and the team members, people
 * and recordings they name must be the account's): the CLI and seeds go through them too.
 */
export async function createWorkflow(em: EntityManager, accountId: number, input: { name: string; steps: unknown }) {
  try {
    const made = await createWorkflowChecked(
      new PgWorkflowStore(em),
      { id: accountId },
      {
        name: v.name('workflow name', input.name),
        steps: input.steps,
      },
      'account',
    );
    return made;
  } catch (e) {
    if (isDomainError(e)) throw new AdminError(e.message);
    throw e;
  }
}

/**
 * A disabled workflow, kept as given: one that conversations brought from elsewhere (import-api,
 * with the steps of it this server can run), or a seed's disabled one (perhaps saved before
 * steps had a form). It is applied to nothing new; the team sees where copies came from and may
 * enable it after a look (changing it checks it then).
 */
export async function recordDisabledWorkflow(
  em: EntityManager,
  accountId: number,
  input: { name: string; steps: unknown[] },
) {
  const [row] = await query<{ id: number }>(
    em,
    'insert into workflow (account_id, name, steps, disabled_at) values (?, ?, ?::jsonb, now()) returning id',
    [accountId, v.name('workflow name', input.name), JSON.stringify(input.steps)],
  );
  if (!row) throw new Error('the workflow insert returned no id');
  return { id: row.id, name: input.name, steps: runnableSteps(input.steps) };
}

/**
 * An intake page, by the rules the API makes one with (a key made from the name when none is
 * given; a primary page takes the place of the last): the CLI, seeds and import-api go through them.
 */
export async function createIntakePage(
  em: EntityManager,
  accountId: number,
  input: {
    name: string;
    primary: boolean;
    workflowId?: number | undefined;
    key?: string | undefined;
    title?: string | undefined;
    welcomeText?: string | undefined;
    conversationTitle?: string | undefined;
    allowAnonymous?: boolean | undefined;
    team?: string[] | undefined;
    disabled?: boolean | undefined;
  },
) {
  try {
    const made = await createIntakePageChecked(
      new PgIntakePageAdminStore(em),
      { id: accountId },
      {
        name: v.name('intake page name', input.name),
        primary: input.primary,
        workflow_id: input.workflowId ?? null,
        key: input.key,
        title: input.title,
        welcome_text: input.welcomeText,
        conversation_title: input.conversationTitle,
        allow_anonymous: input.allowAnonymous,
        team: input.team,
        disabled: input.disabled,
      },
      'account',
    );
    return made;
  } catch (e) {
    if (isDomainError(e)) throw new AdminError(e.message);
    throw e;
  }
}
