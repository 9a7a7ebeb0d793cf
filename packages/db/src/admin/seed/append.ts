import { definitionSteps, runnableSteps, type TeamRole, type WorkflowRecord } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { fromJson, query } from '../../repositories/sql.ts';
import { AdminError } from '../errors.ts';
import { createIntakePage, recordDisabledWorkflow } from '../operations.ts';
import * as v from '../validate.ts';
import type { TSeedConversation } from './format.ts';
import { type AccountRefs, type BatchOptions, loadBatch, Named, type SeedCounts } from './writer.ts';

/*
 * Adding conversations to an account that already exists (import-api): the bulk writer of the
 * seed, given the account's current users, tags, workflows and intake pages as references.
 */

type WorkflowRow = WorkflowRecord & { disabled: boolean };

/** What the bulk writer needs to know of an existing account. */
export async function accountRefs(em: EntityManager, accountId: number): Promise<AccountRefs> {
  const [a] = await query<{
    title_template: string;
    any: boolean;
    anon: boolean;
    search: boolean;
    owner_id: number | null;
    owner_email: string | null;
    owner_name: string | null;
  }>(
    em,
    `select a.title_template, a.default_anyone_can_post as any, a.default_allow_anonymous_messages as anon,
       a.default_allow_search_engines as search, u.id as owner_id, u.email as owner_email, u.name as owner_name
     from account a left join account_user u on u.id = a.owner_id where a.id = ?`,
    [accountId],
  );
  if (!a) throw new AdminError(`no account ${accountId}`);
  const users = await query<{ id: number; email: string }>(
    em,
    'select id, email from account_user where account_id = ? order by id',
    [accountId],
  );
  const tags = await query<{ id: number; name: string }>(
    em,
    'select id, name from tag where account_id = ? order by id',
    [accountId],
  );
  const workflows = new Named<WorkflowRow>('workflow');
  const workflowById = new Map<number, WorkflowRow>();
  for (const w of await query<{ id: number; name: string; steps: unknown; disabled: boolean }>(
    em,
    'select id, name, steps, disabled_at is not null as disabled from workflow where account_id = ? order by id',
    [accountId],
  )) {
    const row = { id: w.id, name: w.name, steps: runnableSteps(fromJson<unknown[]>(w.steps)), disabled: w.disabled };
    workflows.add(w.name, row);
    workflowById.set(w.id, row);
  }
  const workflowOf = (id: number | null) => {
    const w = id === null ? undefined : workflowById.get(id);
    return w && !w.disabled ? { id: w.id, name: w.name, steps: w.steps } : null;
  };
  const intakePages: AccountRefs['intakePages'] = new Named('intake page');
  for (const p of await query<{ id: number; name: string; is_primary: boolean; workflow_id: number | null }>(
    em,
    'select id, name, is_primary, workflow_id from intake_page where account_id = ? order by id',
    [accountId],
  )) {
    intakePages.add(p.name, {
      id: p.id,
      primary: p.is_primary,
      // A disabled workflow is copied onto nothing new (as the intake page store reads it).
      workflow: workflowOf(p.workflow_id),
    });
  }
  return {
    id: accountId,
    titleTemplate: a.title_template,
    defaults: { anyoneCanPost: a.any, allowAnonymousMessages: a.anon, allowSearchEngines: a.search },
    owner:
      a.owner_id === null ? null : { id: a.owner_id, email: a.owner_email as string, name: a.owner_name as string },
    users: new Map(users.map((u) => [u.email.toLowerCase(), u.id])),
    workflows,
    intakePages,
    tags: new Map(tags.map((t) => [t.name.toLowerCase(), t.id])),
    templates: new Map(
      (
        await query<{ id: number; name: string }>(em, 'select id, name from message_template where account_id = ?', [
          accountId,
        ])
      ).map((t) => [t.name.toLowerCase(), t.id]),
    ),
  };
}

/**
 * Adds the users not yet in the account (by e-mail, ignoring case), in the order given, so that
 * their ids ascend in that order, each with their team role if given; `refs.users` learns their ids.
 */
export async function ensureUsers(
  em: EntityManager,
  refs: Pick<AccountRefs, 'id' | 'users'>,
  users: { email: string; name: string; team?: TeamRole | undefined }[],
) {
  const missing = new Map<string, { email: string; name: string; team: TeamRole | null }>();
  for (const u of users) {
    const key = u.email.toLowerCase();
    if (!refs.users.has(key) && !missing.has(key)) {
      missing.set(key, { email: v.email(u.email), name: v.name('user name', u.name), team: u.team ?? null });
    }
  }
  if (missing.size === 0) return 0;
  const rows = await query<{ id: number; email: string }>(
    em,
    `insert into account_user (account_id, email, name, team_role)
     select ?, u->>'email', u->>'name', u->>'team' from jsonb_array_elements(?::jsonb) with ordinality as t(u, n)
     order by n returning id, email`,
    [refs.id, JSON.stringify([...missing.values()])],
  );
  for (const r of rows) refs.users.set(r.email.toLowerCase(), r.id);
  return rows.length;
}

/**
 * The account's workflow with this name and the steps of a copy (those this server runs), made
 * (disabled) if it has none; as its position.
 */
export async function ensureWorkflow(em: EntityManager, refs: AccountRefs, name: string, copied: unknown[]) {
  const steps = definitionSteps(copied);
  const [found] = await query<{ id: number }>(
    em,
    'select id from workflow where account_id = ? and name = ? and steps = ?::jsonb order by id limit 1',
    [refs.id, name, JSON.stringify(steps)],
  );
  let id = found?.id;
  if (id === undefined) {
    const made = await recordDisabledWorkflow(em, refs.id, { name, steps });
    refs.workflows.add(made.name, made);
    id = made.id;
  }
  return refs.workflows.positionOf(id) as number;
}

/**
 * The account's intake page of this name (the primary one, if `primary`), made if it has none;
 * as a seed's reference to it (its position).
 */
export async function ensureIntakePage(em: EntityManager, refs: AccountRefs, name: string, primary: boolean) {
  const [found] = await query<{ id: number }>(
    em,
    primary
      ? 'select id from intake_page where account_id = ? and is_primary order by id limit 1'
      : 'select id from intake_page where account_id = ? and name = ? and not is_primary order by id limit 1',
    primary ? [refs.id] : [refs.id, name],
  );
  let id = found?.id;
  if (id === undefined) {
    const made = await createIntakePage(em, refs.id, { name, primary });
    refs.intakePages.add(made.name, { id: made.id, primary: made.primary, workflow: null });
    id = made.id;
  }
  return refs.intakePages.positionOf(id) as number;
}

/**
 * Writes `conversations` (checked seed conversations) into the existing account, inside the
 * caller's transaction. Their users must be in the account already (ensureUsers).
 */
export async function appendConversations(
  em: EntityManager,
  refs: AccountRefs,
  conversations: TSeedConversation[],
  counts: SeedCounts,
  options: BatchOptions = {},
): Promise<void> {
  if (conversations.length > 0) await loadBatch(em, refs, conversations, counts, options);
}
