import type { EpochMicros } from './shared/time.ts';
import type { AccountAddress } from './shared/urls.ts';
import type { WorkflowCopy, WorkflowStep } from './shared/workflow-steps.ts';

/*
 * The records several areas share: an account as a request acts for it, a conversation and its
 * messages as the store holds them, the places on a team and the kinds of message. This module
 * imports nothing of the areas (shared/ only), so any area may use it without a cycle.
 */

/** The places on an account's team. Everyone else who takes part in a conversation is a participant. */
export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;

export type TeamRole = (typeof TEAM_ROLES)[number];

export const isTeamRole = (value: string | null | undefined): value is TeamRole =>
  TEAM_ROLES.some((role) => role === value);

/** `message_type`: typed text, or a recording of the camera, the screen, or the microphone. */
export const MESSAGE_TYPES = ['text', 'video', 'screen', 'audio'] as const;

export type MessageType = (typeof MESSAGE_TYPES)[number];

export const isMessageType = (value: unknown): value is MessageType => MESSAGE_TYPES.some((t) => t === value);

/** How a message's text is kept: as written (`text`), or as the safe subset of HTML (`html`, people/message-text.ts). */
export const MESSAGE_FORMATS = ['text', 'html'] as const;

export type MessageFormat = (typeof MESSAGE_FORMATS)[number];

/** The message template a message was made from, as it was named then. */
export interface TemplateRef {
  id: number;
  name: string;
}

/**
 * Where a conversation stands for the team (the inbox's triage): `open` (waiting on us),
 * `waiting` (on them) or `closed`. A message from the other side opens it again; a reply by the
 * team moves an open one to waiting (triage.ts).
 */
export const CONVERSATION_STATES = ['open', 'waiting', 'closed'] as const;

export type ConversationState = (typeof CONVERSATION_STATES)[number];

export const isConversationState = (value: unknown): value is ConversationState =>
  CONVERSATION_STATES.some((s) => s === value);

/** How a conversation began: create_conversation (the API), a visitor on an intake page, or the team on its site. */
export const CONVERSATION_SOURCES = ['api', 'intake', 'team'] as const;

export type ConversationSource = (typeof CONVERSATION_SOURCES)[number];

export const isConversationSource = (value: unknown): value is ConversationSource =>
  CONVERSATION_SOURCES.some((s) => s === value);

/** The account a request acts for, as resolved from its API token. */
export interface AccountContext extends AccountAddress {
  id: number;
  name: string;
  defaults: ConversationSettings;
  titleTemplate: string;
  owner: UserRecord | null;
}

/** An API token that resolved to its account. */
export interface Authenticated {
  tokenId: number;
  /** The account's own requests per rate-limit window; null: the server's default. */
  rateLimit: number | null;
  account: AccountContext;
  /**
   * The account's change mark, read with the token (so before any data the request reads): it
   * grows with every change to what the API answers for the account. Conditional requests use it.
   */
  changeMark: string;
}

/** What a response says about its token's quota (the RateLimit-* headers). */
export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the quota is whole again. */
  resetSeconds: number;
}

export interface ConversationSettings {
  anyoneCanPost: boolean;
  allowAnonymousMessages: boolean;
  allowSearchEngines: boolean;
}

export interface UserRecord {
  id: number;
  email: string;
  name: string;
}

export interface TagRecord {
  id: number;
  name: string;
}

/** A workflow as an intake page applies it: the steps of it that run (see workflows.ts). */
export interface WorkflowRecord {
  id: number;
  name: string;
  steps: WorkflowStep[];
}

export type MessageAuthorRecord = { anonymous: true } | ({ anonymous: false } & UserRecord);

export interface MessageRecord {
  id: number;
  messageType: MessageType;
  recordedDurationSeconds: number;
  author: MessageAuthorRecord;
  text: string;
  /** How `text` is kept: as written, or as the safe subset of HTML (the API's create_message). */
  format: MessageFormat;
  /** A recording's URL elsewhere (brought in by a seed or an import); null for one kept here. */
  downloadMediaUrl: string | null;
  /** True when this server keeps the recording: its URL is the account's `/media/…`. */
  hostedMedia: boolean;
}

/**
 * A conversation as the store holds it: the one record. What each reader needs of it is a Pick of
 * it (`ConversationAccess`, `ConversationPageRecord`, `MessagePageRecord`), so a member means the
 * same thing wherever it appears.
 */
export interface ConversationRecord extends ConversationSettings {
  id: number;
  title: string;
  slug: string;
  viaPrimaryIntakePage: boolean;
  intakePageId: number | null;
  /** The workflow as it was copied from the intake page at creation, with its steps' states; null when none applied. */
  workflow: WorkflowCopy | null;
  createdAt: EpochMicros;
  users: UserRecord[];
  tags: TagRecord[];
  messages: MessageRecord[];
}

/** An account as its own site knows it: found by the host a request came to, not by a token. */
export interface SiteAccount extends AccountAddress {
  id: number;
  name: string;
}

export interface IntakePageRecord {
  id: number;
  primary: boolean;
  workflow: WorkflowRecord | null;
}
