import { MAX_PAGE, SLUG_MAX_LENGTH, SLUG_PATTERN, TITLE_MAX_LENGTH } from '@convo/domain';
import { z } from 'zod';

/*
 * Schemas shared by the three conversation procedures: the wire shapes of the spec.
 */

/**
 * trpc-to-openapi switches on `coerce` for every number and boolean member of an input object,
 * so "false" would read as true and [5] as 5. It leaves a pipe alone, so strict members are piped.
 */
export const exactBoolean = () => z.boolean().pipe(z.boolean());
export const exactInt = (min: number, max: number) => z.number().int().min(min).max(max).pipe(z.number());

export const ZSlug = z
  .string()
  .min(1, 'slug must not be empty')
  .max(SLUG_MAX_LENGTH, `slug must be at most ${SLUG_MAX_LENGTH} characters`)
  .regex(SLUG_PATTERN, "slug may contain only ASCII letters, digits, '_' and '-'");

export const ZTitle = z
  .string()
  .min(1, 'title must not be empty')
  .max(TITLE_MAX_LENGTH, `title must be at most ${TITLE_MAX_LENGTH} characters`)
  .refine((t) => !t.includes('\u0000'), 'title must not contain NUL characters');

export const ZUser = z.object({ id: z.number().int(), email: z.string(), name: z.string() }).meta({ id: 'User' });
export const ZTag = z.object({ id: z.number().int(), name: z.string() }).meta({ id: 'Tag' });

export const ZAuthor = z
  .union([
    z.object({ anonymous: z.literal(true) }),
    z.object({ anonymous: z.literal(false), id: z.number().int(), name: z.string(), email: z.string() }),
  ])
  .meta({ id: 'MessageAuthor' });

export const ZMessage = z
  .object({
    id: z.number().int(),
    conversation_id: z.number().int(),
    message_type: z.string(),
    recorded_duration_seconds: z.number().int(),
    author: ZAuthor,
    message_url: z.string(),
    embed_message_url: z.string(),
    download_media_url: z.string().nullable(),
    text: z.string(),
  })
  .meta({ id: 'Message' });

export const ZWorkflow = z
  .union([z.object({ id: z.number().int(), name: z.string(), steps: z.array(z.unknown()) }), z.strictObject({})])
  .meta({ id: 'Workflow', description: 'The workflow applied at creation, or {} when none applies.' });

const conversationFields = {
  id: z.number().int(),
  title: z.string(),
  slug: z.string(),
  public: z.boolean(),
  via_primary_intake_page: z.boolean(),
  intake_page_id: z.number().int().nullable(),
  conversation_url: z.string(),
  conversation_embed_url: z.string(),
  anyone_can_post: z.boolean(),
  allow_anonymous_messages: z.boolean(),
  allow_search_engines: z.boolean(),
  tags: z.array(ZTag),
  users: z.array(ZUser),
  messages: z.array(ZMessage),
};

export const ZCreatedConversation = z.object(conversationFields).meta({ id: 'CreatedConversation' });

export const ZListedConversation = z
  .object({ ...conversationFields, workflow: ZWorkflow })
  .meta({ id: 'ListedConversation' });

export const ZConversation = z
  .object({
    ...conversationFields,
    workflow: ZWorkflow,
    conversation_created_time: z.string(),
    conversation_credated_time_nice: z.string(),
  })
  .meta({ id: 'Conversation' });

const PAGE_RULE = `page must be a whole number from 1 to ${MAX_PAGE}`;
export const ZPage = z.number({ error: PAGE_RULE }).int(PAGE_RULE).min(1, PAGE_RULE).max(MAX_PAGE, PAGE_RULE);
