import type { AccountContext, ConversationSource, IntakePageRecord } from '../records.ts';
import { DomainError } from '../shared/errors.ts';
import { clockMicros, dateFromMicros, type EpochMicros } from '../shared/time.ts';
import { copyWorkflow } from '../shared/workflow-steps.ts';
import type { ConversationStore, IntakePageStore, NewConversation, StoredConversation } from './ports.ts';
import { SlugTakenError } from './ports.ts';
import { generateSlug, slugProblem } from './slug.ts';
import { renderTitle, titleProblem } from './title.ts';
import { type CreatedConversationView, createdConversationView } from './views.ts';

export interface CreateConversationInput {
  title?: string | undefined;
  slug?: string | undefined;
  anyoneCanPost?: boolean | undefined;
  allowAnonymousMessages?: boolean | undefined;
  allowSearchEngines?: boolean | undefined;
  primaryIntakePage?: boolean | undefined;
  intakePageId?: number | undefined;
}

/** The Idempotency-Key a create came with, if any. */
export interface CreateOptions {
  idempotencyKey?: string | undefined;
}

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * An Idempotency-Key is one header of 1 to 255 printable ASCII characters other than a comma:
 * HTTP joins a repeated header's values with commas, so a comma is how two keys look.
 */
export function idempotencyKeyProblem(key: string): string | null {
  if (key.includes(',')) return 'give one Idempotency-Key header, without commas';
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || /[^\x20-\x7e]/.test(key)) {
    return `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`;
  }
  return null;
}

/** What create answers: the new conversation, or the first answer replayed for a repeated key. */
export interface CreateResult {
  view: CreatedConversationView;
  replayed: boolean;
}

export interface CreateConversationDeps {
  conversations: ConversationStore;
  intakePages: IntakePageStore;
  /** The time a conversation is created at (tests set it); default the server's clock. */
  clock?: () => EpochMicros;
}

/** One message whether the page is unknown, another account's, or the wrong kind: nothing leaks. */
export const INTAKE_PAGE_UNUSABLE = 'intake page not found or not usable for this request';
export const NO_PRIMARY_INTAKE_PAGE = 'the account has no primary intake page';

/** A random slug collides only with astronomically small odds; a few fresh draws settle it. */
const GENERATED_SLUG_ATTEMPTS = 3;

async function resolveIntakePage(
  deps: CreateConversationDeps,
  accountId: number,
  input: CreateConversationInput,
): Promise<IntakePageRecord | null> {
  if (input.primaryIntakePage === true && input.intakePageId !== undefined) {
    throw new DomainError('intake_page_unusable', 'give either primary_intake_page or intake_page_id, not both');
  }
  if (input.primaryIntakePage === true) {
    const page = await deps.intakePages.findPrimary(accountId);
    if (!page) throw new DomainError('intake_page_unusable', NO_PRIMARY_INTAKE_PAGE);
    return page;
  }
  if (input.intakePageId !== undefined) {
    const page = await deps.intakePages.findById(accountId, input.intakePageId);
    // The primary page is reached through primary_intake_page, never by its id.
    if (!page || page.primary) throw new DomainError('intake_page_unusable', INTAKE_PAGE_UNUSABLE);
    return page;
  }
  return null;
}

/** What a new conversation's fields are when only some are given: the rule create and seeding share. */
export interface ConversationDraftInput {
  title?: string | undefined;
  slug?: string | undefined;
  anyoneCanPost?: boolean | undefined;
  allowAnonymousMessages?: boolean | undefined;
  allowSearchEngines?: boolean | undefined;
  memberIds?: number[] | undefined;
  /** How it begins (create_conversation: the API, the default; a seed: as its intake page says). */
  source?: ConversationSource | undefined;
}

export function draftConversation(
  account: Pick<AccountContext, 'titleTemplate' | 'defaults' | 'owner'>,
  input: ConversationDraftInput,
  page: IntakePageRecord | null,
  createdAt: EpochMicros,
): NewConversation {
  return {
    createdAt,
    title: input.title ?? renderTitle(account.titleTemplate, dateFromMicros(createdAt)),
    slug: input.slug ?? generateSlug(),
    anyoneCanPost: input.anyoneCanPost ?? account.defaults.anyoneCanPost,
    allowAnonymousMessages: input.allowAnonymousMessages ?? account.defaults.allowAnonymousMessages,
    allowSearchEngines: input.allowSearchEngines ?? account.defaults.allowSearchEngines,
    viaPrimaryIntakePage: page?.primary === true,
    intakePageId: page && !page.primary ? page.id : null,
    source: input.source ?? 'api',
    workflow: page?.workflow ? copyWorkflow(page.workflow, createdAt) : null,
    // The account's owner joins every new conversation unless members are named.
    memberIds: input.memberIds ?? (account.owner ? [account.owner.id] : []),
  };
}

/** The request as an Idempotency-Key remembers it: every field, in one order, defaults explicit. */
function canonicalRequest(input: CreateConversationInput): string {
  return JSON.stringify([
    input.title ?? null,
    input.slug ?? null,
    input.anyoneCanPost ?? null,
    input.allowAnonymousMessages ?? null,
    input.allowSearchEngines ?? null,
    input.primaryIntakePage ?? null,
    input.intakePageId ?? null,
  ]);
}

export async function createConversation(
  deps: CreateConversationDeps,
  account: AccountContext,
  input: CreateConversationInput,
  options: CreateOptions = {},
): Promise<CreateResult> {
  const key = options.idempotencyKey;
  const keyProblem = key === undefined ? null : idempotencyKeyProblem(key);
  if (keyProblem) throw new DomainError('invalid_input', keyProblem);
  if (input.slug !== undefined) {
    const problem = slugProblem(input.slug);
    if (problem) throw new DomainError('invalid_input', problem);
  }
  if (input.title !== undefined) {
    const problem = titleProblem(input.title);
    if (problem) throw new DomainError('invalid_input', problem);
  }
  const page = await resolveIntakePage(deps, account.id, input);
  const draft = draftConversation(account, input, page, (deps.clock ?? clockMicros)());
  const answer = (stored: StoredConversation): CreatedConversationView =>
    createdConversationView(account, {
      ...draft,
      ...stored,
      users: account.owner ? [account.owner] : [],
      tags: [],
      messages: [],
    });

  const attempts = input.slug === undefined ? GENERATED_SLUG_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      if (key === undefined) {
        return { view: answer(await deps.conversations.insert(account.id, draft)), replayed: false };
      }
      const outcome = await deps.conversations.insertOnce(account.id, draft, {
        key,
        request: canonicalRequest(input),
        answer,
      });
      if (outcome.kind === 'key_reused') {
        throw new DomainError('idempotency_key_reused');
      }
      return outcome.kind === 'stored'
        ? { view: answer(outcome.stored), replayed: false }
        : { view: outcome.answer as CreatedConversationView, replayed: true };
    } catch (e) {
      if (!(e instanceof SlugTakenError)) throw e;
      if (attempt >= attempts) {
        throw new DomainError('slug_taken');
      }
      draft.slug = generateSlug();
    }
  }
}
