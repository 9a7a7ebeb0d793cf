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
  Tag,
  Workflow,
} from './conversations.ts';
import { LiveEvent, LivePurged, LiveWatch } from './live.ts';
import {
  ConversationFollower,
  NotificationDigest,
  NotificationMute,
  NotifyEvent,
  OutgoingMail,
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

/** Every entity, for MikroORM's discovery (typed loosely: the list's own type is too long to declare). */
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
  ConversationRead,
  WorkflowJob,
  WorkflowEvent,
  NotifyEvent,
  NotificationDigest,
  NotificationMute,
  ConversationFollower,
  OutgoingMail,
  WebhookEndpoint,
  WebhookEvent,
  WebhookDelivery,
  WebhookAttempt,
  LiveEvent,
  LivePurged,
  LiveWatch,
];
