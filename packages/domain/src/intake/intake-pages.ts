import { z } from 'zod';
import { TITLE_TEMPLATE_MAX_LENGTH } from '../conversations/title.ts';

import { DomainError } from '../shared/errors.ts';

import { emailProblem } from '../shared/person.ts';

import { ZText } from '../shared/text.ts';

/*
 * An account's intake pages as its team manages them (the API beside the spec's operations, the
 * CLI, seeds): the page a visitor starts a conversation on, with its key (its address), title,
 * welcome text, whether anonymous starts are allowed, the workflow it applies and the team members
 * who join each conversation started there. One page may be primary. A disabled page is unusable,
 * as a missing one is.
 */

export const INTAKE_PAGE_KEY_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$/;

export const ZIntakePageId = z.number().int().min(1).max(2_147_483_647);

export const ZIntakePageKey = z.string().regex(INTAKE_PAGE_KEY_PATTERN, {
  message: '1 to 60 lower-case letters, digits and hyphens, not starting or ending with a hyphen',
});

/** A key from a page's name: `Contact us!` → `contact-us`. */
export const keyFromName = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '') || 'page';

const ZTeamEmail = z.string().superRefine((value, ctx) => {
  const problem = emailProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
});

/** What a page's team can set; every member optional on a change. */
export const intakePageFields = {
  name: ZText('name').pipe(z.string().trim().min(1).max(255)),
  key: ZIntakePageKey.meta({
    description: 'Its address: `{account_host}/p/<key>`. Omitted on create: made from the name.',
  }),
  title: ZText('title').pipe(z.string().max(255)).meta({ description: 'Shown above the form; the name when empty.' }),
  welcome_text: ZText('welcome_text').pipe(z.string().max(5_000)),
  conversation_title: ZText('conversation_title')
    .pipe(z.string().max(TITLE_TEMPLATE_MAX_LENGTH))
    .meta({
      description:
        'How conversations started on the page are titled: `{name}` (the person, or "A visitor"), `{words}` ' +
        '(their first words, or the kind of recording they sent), `{page}` (the page’s name), `{date}` and ' +
        '`{time}` (UTC). Empty: "{name}: {words}" ("Tom Tester: I need help with my invoice").',
    }),
  welcome_recording_message_id: z.number().int().min(1).max(2_147_483_647).nullable().meta({
    description:
      'A message of the account whose recording (kept by this server) is shown above the form, at `/p/<key>/welcome`; null for none.',
  }),
  primary: z.boolean().meta({
    description: 'The account’s primary intake page (at most one: making a page primary makes the other not).',
  }),
  workflow_id: z
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .nullable()
    .meta({ description: 'The workflow it applies; null for none.' }),
  allow_anonymous: z.boolean().meta({
    description: 'Visitors may start a conversation without giving a name and an e-mail address.',
  }),
  team: z.array(ZTeamEmail).max(20).meta({
    description: 'Team members (by e-mail) who join every conversation started on the page and are told of it.',
  }),
  disabled: z.boolean().meta({ description: 'A disabled page is unusable, as a missing one is.' }),
};

/**
 * A page's fields as a form sent them (the team's site), checked by the same schema the API
 * publishes; a refusal names the field.
 */
export function parseIntakePageInput(input: Record<string, unknown>): IntakePageInput {
  const parsed = z.object(intakePageFields).partial().safeParse(input);
  if (!parsed.success) throw new DomainError('invalid_input', z.prettifyError(parsed.error).replaceAll('\n', ' '));
  return parsed.data;
}

export const ZIntakePage = z
  .object({
    id: ZIntakePageId,
    key: z.string(),
    name: z.string(),
    title: z.string(),
    welcome_text: z.string(),
    welcome_recording_message_id: z.number().int().nullable(),
    conversation_title: z.string(),
    primary: z.boolean(),
    workflow_id: z.number().int().nullable(),
    allow_anonymous: z.boolean(),
    team: z.array(z.string()),
    disabled: z.boolean(),
    created_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
    updated_at: z.string().meta({ description: 'ISO 8601, UTC.' }),
  })
  .meta({ id: 'IntakePage' });

export type IntakePageView = z.infer<typeof ZIntakePage>;

export interface IntakePageDefinition {
  id: number;
  key: string;
  name: string;
  title: string;
  welcomeText: string;
  welcomeMessageId: number | null;
  conversationTitle: string;
  primary: boolean;
  workflowId: number | null;
  allowAnonymous: boolean;
  team: string[];
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A page as saved: every member given (a create's defaults filled in). */
export interface IntakePageDraft {
  name: string;
  key: string;
  title: string;
  welcomeText: string;
  welcomeMessageId: number | null;
  conversationTitle: string;
  primary: boolean;
  workflowId: number | null;
  allowAnonymous: boolean;
  /** Team members' user ids. */
  team: number[];
  disabled: boolean;
}

export type IntakePageWrite =
  | { kind: 'saved'; page: IntakePageDefinition }
  | { kind: 'key_taken' | 'limit' | 'not_found' };

export interface IntakePageAdminStore {
  list(accountId: number): Promise<IntakePageDefinition[]>;
  find(accountId: number, id: number): Promise<IntakePageDefinition | null>;
  /** Stores a page unless the account has `max` or the key is taken; a primary one takes the place of the last. */
  create(accountId: number, page: IntakePageDraft, max: number): Promise<IntakePageWrite>;
  change(accountId: number, id: number, page: IntakePageDraft): Promise<IntakePageWrite>;
  /** The account's team members among these addresses (lower-cased address → user id). */
  teamIds(accountId: number, emails: string[]): Promise<Map<string, number>>;
  hasWorkflow(accountId: number, workflowId: number): Promise<boolean>;
  /** True when the account's message (not hidden) has a recording this server keeps. */
  hasRecording(accountId: number, messageId: number): Promise<boolean>;
  /** The team's latest recordings this server keeps (not hidden), newest first: what a welcome may be. */
  teamRecordings(accountId: number, limit: number): Promise<TeamRecording[]>;
}

/** A recording the team made, as the intake page's form offers it for a welcome. */
export interface TeamRecording {
  messageId: number;
  kind: string;
  seconds: number;
  author: string;
  conversationTitle: string;
  createdAt: Date;
}

/** How many of the team's recordings the intake page's form offers. */
export const WELCOME_CHOICES = 50;

export const intakePageView = (p: IntakePageDefinition): IntakePageView => ({
  id: p.id,
  key: p.key,
  name: p.name,
  title: p.title,
  welcome_text: p.welcomeText,
  welcome_recording_message_id: p.welcomeMessageId,
  conversation_title: p.conversationTitle,
  primary: p.primary,
  workflow_id: p.workflowId,
  allow_anonymous: p.allowAnonymous,
  team: p.team,
  disabled: p.disabledAt !== null,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

export interface IntakePageInput {
  name?: string | undefined;
  key?: string | undefined;
  title?: string | undefined;
  welcome_text?: string | undefined;
  welcome_recording_message_id?: number | null | undefined;
  conversation_title?: string | undefined;
  primary?: boolean | undefined;
  workflow_id?: number | null | undefined;
  allow_anonymous?: boolean | undefined;
  team?: string[] | undefined;
  disabled?: boolean | undefined;
}

export async function draftOf(
  store: IntakePageAdminStore,
  accountId: number,
  input: IntakePageInput,
  current: IntakePageDefinition | null,
): Promise<IntakePageDraft> {
  const name = input.name?.trim() ?? current?.name;
  if (!name) throw new DomainError('invalid_input', 'name: give the page a name');
  const key = input.key ?? current?.key ?? keyFromName(name);
  const problem = ZIntakePageKey.safeParse(key);
  if (!problem.success) throw new DomainError('invalid_input', `key: ${problem.error.issues[0]?.message}`);
  const workflowId = input.workflow_id === undefined ? (current?.workflowId ?? null) : input.workflow_id;
  if (workflowId !== null && !(await store.hasWorkflow(accountId, workflowId))) {
    throw new DomainError('invalid_input', `workflow_id: no workflow ${workflowId} in this account`);
  }
  const welcomeMessageId =
    input.welcome_recording_message_id === undefined
      ? (current?.welcomeMessageId ?? null)
      : input.welcome_recording_message_id;
  if (welcomeMessageId !== null && !(await store.hasRecording(accountId, welcomeMessageId))) {
    throw new DomainError(
      'invalid_input',
      `welcome_recording_message_id: message ${welcomeMessageId} has no recording kept here`,
    );
  }
  const emails = input.team ?? current?.team ?? [];
  const ids = emails.length === 0 ? new Map<string, number>() : await store.teamIds(accountId, emails);
  const strangers = emails.filter((e) => !ids.has(e.trim().toLowerCase()));
  if (strangers.length > 0) {
    throw new DomainError('invalid_input', `team: not on the account's team: ${strangers.join(', ')}`);
  }
  return {
    name,
    key,
    title: input.title ?? current?.title ?? '',
    welcomeText: input.welcome_text ?? current?.welcomeText ?? '',
    welcomeMessageId,
    conversationTitle: input.conversation_title ?? current?.conversationTitle ?? '',
    primary: input.primary ?? current?.primary ?? false,
    workflowId,
    allowAnonymous: input.allow_anonymous ?? current?.allowAnonymous ?? false,
    team: [...new Set(emails.map((e) => ids.get(e.trim().toLowerCase()) as number))],
    disabled: input.disabled ?? (current ? current.disabledAt !== null : false),
  };
}

export function saved(write: IntakePageWrite): IntakePageView {
  switch (write.kind) {
    case 'saved':
      return intakePageView(write.page);
    case 'key_taken':
      throw new DomainError('intake_page_key_taken');
    case 'limit':
      throw new DomainError('intake_page_limit_reached');
    case 'not_found':
      throw new DomainError('intake_page_not_found');
  }
}
