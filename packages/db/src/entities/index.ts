/*
 * Every table is an entity here, one file per area; files import only the ones above them
 * (accounts ← people, conversations ← workflows, notifications; webhooks and live stand alone).
 * The migrations make the same schema: `schema.test.ts` asks MikroORM's schema generator for the
 * difference between these entities and a freshly migrated database and expects none.
 */
import type { EntitySchema } from '@mikro-orm/core';
import {
  Account,
  AccountChange,
  ApiToken,
  IdempotencyKey,
  RateLimitBucket,
  SiteSecret,
  User,
  VisitorRateLimit,
} from './accounts.ts';
import {
  Conversation,
  ConversationMember,
  ConversationRead,
  ConversationTag,
  IntakePage,
  IntakePageMember,
  Message,
  MessagePlay,
  MessageReaction,
  MessageTemplate,
  Tag,
  Transcript,
  Workflow,
} from './conversations.ts';
import { LiveEvent, LivePurged, LiveWatch } from './live.ts';
import {
  ConversationFollower,
  InboundMail,
  NotificationDigest,
  NotificationMute,
  NotifyEvent,
  OutgoingMail,
  ReplyAddress,
} from './notifications.ts';
import { PassCode, SignInLink, SiteSession } from './people.ts';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent } from './webhooks.ts';
import { WorkflowEvent, WorkflowJob } from './workflows.ts';

export * from './accounts.ts';
export * from './conversations.ts';
export * from './live.ts';
export * from './notifications.ts';
export * from './people.ts';
export * from './webhooks.ts';
export * from './workflows.ts';

/** The tables and columns as typed queries see them (`repositories/query.ts`). */
export type Schema =
  | typeof Account
  | typeof User
  | typeof ApiToken
  | typeof RateLimitBucket
  | typeof IdempotencyKey
  | typeof AccountChange
  | typeof VisitorRateLimit
  | typeof SiteSecret
  | typeof SiteSession
  | typeof SignInLink
  | typeof PassCode
  | typeof Workflow
  | typeof IntakePage
  | typeof IntakePageMember
  | typeof Conversation
  | typeof ConversationMember
  | typeof Tag
  | typeof ConversationTag
  | typeof Message
  | typeof MessageTemplate
  | typeof MessagePlay
  | typeof MessageReaction
  | typeof Transcript
  | typeof ConversationRead
  | typeof WorkflowJob
  | typeof WorkflowEvent
  | typeof NotifyEvent
  | typeof NotificationDigest
  | typeof NotificationMute
  | typeof ConversationFollower
  | typeof OutgoingMail
  | typeof ReplyAddress
  | typeof InboundMail
  | typeof WebhookEndpoint
  | typeof WebhookEvent
  | typeof WebhookDelivery
  | typeof WebhookAttempt
  | typeof LiveEvent
  | typeof LivePurged
  | typeof LiveWatch;

/** Every entity, for MikroORM's discovery; the schema test finds a table missing here. */
export const entities: EntitySchema[] = [
  Account,
  User,
  ApiToken,
  RateLimitBucket,
  IdempotencyKey,
  AccountChange,
  VisitorRateLimit,
  SiteSecret,
  SiteSession,
  SignInLink,
  PassCode,
  Workflow,
  IntakePage,
  IntakePageMember,
  Conversation,
  ConversationMember,
  Tag,
  ConversationTag,
  Message,
  MessageTemplate,
  MessagePlay,
  MessageReaction,
  Transcript,
  ConversationRead,
  WorkflowJob,
  WorkflowEvent,
  NotifyEvent,
  NotificationDigest,
  NotificationMute,
  ConversationFollower,
  OutgoingMail,
  ReplyAddress,
  InboundMail,
  WebhookEndpoint,
  WebhookEvent,
  WebhookDelivery,
  WebhookAttempt,
  LiveEvent,
  LivePurged,
  LiveWatch,
] satisfies Schema[];
