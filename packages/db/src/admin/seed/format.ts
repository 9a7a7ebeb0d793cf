import {
  DEFAULT_TITLE_TEMPLATE,
  MAX_MOMENT_SECONDS,
  MESSAGE_FORMATS,
  MESSAGE_TYPES,
  microsFromDate,
  REACTION_NAMES,
  TEAM_ROLES,
  WEBHOOK_EVENT_TYPES,
  ZSlug,
  ZText,
  ZTitle,
} from '@convo/domain';
import { z } from 'zod';
import { AdminError } from '../errors.ts';

/* The seed file format; docs/operating.md describes it and examples/seed.json shows it whole. */

/** JS reads at most milliseconds; the database gets the full string, microseconds and all. */
export const seedDate = (s: string): Date => new Date(Date.parse(s.replace(' ', 'T').replace(/(\.\d{3})\d+/, '$1')));
export const seedMicros = (s: string) => microsFromDate(seedDate(s));

/** ISO 8601 with an offset; up to 6 fractional digits survive into the database. */
const ZTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:?\d{2})$/, 'an ISO 8601 time with offset')
  .refine((s) => !Number.isNaN(seedDate(s).getTime()), 'a real time');

/**
 * How a seed names one of the account's workflows or intake pages: by its name, or, where names
 * repeat (the exporter does this), by its position in the account's list, from 1.
 */
export const ZSeedRef = z.union([z.string(), z.number().int().min(1)]);
export type TSeedRef = z.infer<typeof ZSeedRef>;

const ZTagName = ZText('tag').pipe(z.string().min(1).max(100));

export const ZSeedMessage = z.strictObject({
  /** E-mail of one of the account's users, or null for an anonymous author. */
  author: z.string().nullable().default(null),
  text: ZText('message text').default(''),
  /** `html`: the text is the safe subset of HTML create_message keeps (sanitized again when loaded). */
  format: z.enum(MESSAGE_FORMATS).default('text'),
  type: z.enum(MESSAGE_TYPES).default('text'),
  recorded_duration_seconds: z.number().int().min(0).max(2_147_483_647).default(0),
  download_media_url: z.string().nullable().default(null),
  /**
   * A recording for this server to keep: a file's path, relative to the seed file's folder (an
   * export writes them beside itself). It is probed when loaded: its kind and duration come from
   * the bytes (`type` only tells a screen recording from a camera one).
   */
  media_file: z.string().min(1).max(4096).optional(),
  created_at: ZTimestamp.optional(),
  /** Hidden by the team: loaded, but in no answer (an export marks them so). */
  hidden: z.boolean().default(false),
  /** An internal note: only the account's team sees it. */
  internal: z.boolean().default(false),
  /** The name of the message template it was made from, as it was then (the account's template of that name, if any). */
  template: z.string().min(1).max(255).optional(),
  /**
   * A reply in a thread: the position (1-based) in this conversation's `messages` of the thread's
   * first message, an earlier one that is not a reply itself. A reply in a note's thread is a note.
   */
  thread_of: z.number().int().min(1).max(1_000_000).optional(),
  /** A thread reply's moment of its thread's recording (whole seconds): needs `thread_of`. */
  at_seconds: z.number().int().min(0).max(MAX_MOMENT_SECONDS).optional(),
  /**
   * Its reactions, oldest first: a kind of the set, by a user of the account (`user`, an e-mail
   * address) or a visitor (`null`), once of each kind per user. A visitor's is loaded as a count:
   * the browser session it was bound to is this file's no more.
   */
  reactions: z
    .array(z.strictObject({ reaction: z.enum(REACTION_NAMES), user: z.string().min(1).max(320).nullable() }))
    .max(10_000)
    .optional(),
  /**
   * Its recording's transcript (needs `media_file`), as the speech engine made it and the team
   * corrected it: loaded complete, so the engine is not asked again.
   */
  transcript: z
    .strictObject({
      language: z.string().max(16).nullable().default(null),
      segments: z
        .array(
          z.strictObject({
            start: z.number().min(0).max(1e7),
            end: z.number().min(0).max(1e7),
            text: ZText('transcript segment').pipe(z.string().max(10_000)),
          }),
        )
        .max(100_000),
    })
    .optional(),
});

export const ZSeedConversation = z.strictObject({
  // The API's rules, through the domain's functions: what the API refuses, a seed cannot bring in.
  title: ZTitle.optional(),
  slug: ZSlug.optional(),
  anyone_can_post: z.boolean().optional(),
  allow_anonymous_messages: z.boolean().optional(),
  allow_search_engines: z.boolean().optional(),
  /** One of the account's intake pages (a name or position); the primary one sets via_primary_intake_page. */
  intake_page: ZSeedRef.optional(),
  /**
   * The conversation's copy of its workflow, as made when it was created (`of`: the workflow it
   * was copied from); null for none. Omitted, the intake page's workflow as it is now.
   */
  workflow: z
    .strictObject({ of: ZSeedRef, name: z.string(), steps: z.array(z.unknown()) })
    .nullable()
    .optional(),
  created_at: ZTimestamp.optional(),
  /** E-mails of members; omitted, the owner alone (as the API does). Every message's author joins too. */
  members: z.array(z.string()).optional(),
  tags: z.array(ZTagName).default([]),
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
  /** Requests per rate-limit window for each of the account's tokens; null: the server's default. */
  rate_limit: z.number().int().min(0).max(1_000_000_000).nullable().default(null),
  /** In this order: they get ascending ids, which is the order the API lists a conversation's users. */
  users: z
    .array(
      z.strictObject({
        email: z.string(),
        name: z.string(),
        /** Their place on the account's team; omitted, a participant. The owner is on it as `owner`. */
        team: z.enum(TEAM_ROLES).optional(),
      }),
    )
    .default([]),
  /** Tags made before the conversations load, in this order (the order the API lists them). */
  tags: z.array(ZTagName).default([]),
  /** Tokens to install as given (for scripted set-ups); omitted, one is generated and reported. */
  tokens: z.array(z.strictObject({ name: z.string(), token: z.string().min(20).max(512) })).optional(),
  /**
   * Workflows, saved by the API's rules (docs/workflows.md); a disabled one is kept as given (it
   * may be one saved before steps had a form), applied to nothing new until it is changed.
   */
  workflows: z
    .array(z.strictObject({ name: z.string(), steps: z.array(z.unknown()), disabled: z.boolean().optional() }))
    .default([]),
  /**
   * The team's message templates (names unique ignoring case): a text under create_message's rules
   * (`html`: the safe subset, sanitized again when loaded), the user who made it, and a recording
   * as a message's (`media_file`, probed when loaded; `type` tells a screen recording from a camera one).
   */
  message_templates: z
    .array(
      z.strictObject({
        name: ZText('template name').pipe(z.string().trim().min(1).max(255)),
        text: ZText('template text').pipe(z.string().max(10_000)).default(''),
        format: z.enum(MESSAGE_FORMATS).default('text'),
        creator: z.string().optional(),
        type: z.enum(MESSAGE_TYPES).default('video'),
        media_file: z.string().min(1).max(4096).optional(),
      }),
    )
    .default([]),
  /** Intake pages, made by the API's rules (docs/api.md): the key is made from the name when omitted. */
  intake_pages: z
    .array(
      z.strictObject({
        name: z.string(),
        primary: z.boolean().default(false),
        workflow: ZSeedRef.optional(),
        key: z.string().optional(),
        title: z.string().optional(),
        welcome_text: z.string().optional(),
        /** How conversations started on it are titled (see the API's intake page). */
        conversation_title: z.string().optional(),
        allow_anonymous: z.boolean().optional(),
        /** Team members' e-mails. */
        team: z.array(z.string()).optional(),
        disabled: z.boolean().optional(),
      }),
    )
    .default([]),
  /**
   * Endpoints to subscribe before the conversations load (checked as `webhook add` checks them);
   * the conversations and messages are announced to them only with `seed --emit-events`.
   */
  webhooks: z
    .array(
      z.strictObject({
        url: z.string().min(1).max(2048),
        events: z
          .array(z.enum(WEBHOOK_EVENT_TYPES))
          .min(1)
          .default([...WEBHOOK_EVENT_TYPES]),
        /** A known signing secret (scripted set-ups); omitted, one is made and reported. */
        secret: z
          .string()
          .regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, 'whsec_ and the base64 of at least 24 bytes')
          .optional(),
      }),
    )
    .default([]),
});

export const ZSeedAccount = ZSeedAccountHeader.extend({ conversations: z.array(ZSeedConversation).default([]) });
export const ZSeed = z.strictObject({
  /** Free text for people (an export says here what it leaves out). */
  comment: z.string().optional(),
  accounts: z.array(ZSeedAccount),
});

export type TSeed = z.input<typeof ZSeed>;
export type TSeedAccountHeader = z.infer<typeof ZSeedAccountHeader>;
export type TSeedConversation = z.infer<typeof ZSeedConversation>;

/** Parses one part of a seed, naming where it is when it is wrong. */
export function parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new AdminError(`${where}: ${z.prettifyError(result.error).replaceAll('\n', ' ')}`);
  return result.data;
}
