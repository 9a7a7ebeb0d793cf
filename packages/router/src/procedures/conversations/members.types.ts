import { EMAIL_MAX_LENGTH } from '@convo/domain';
import { z } from 'zod';
import { BODY_ERRORS } from '../../operation.ts';
import { listedConversationExample, notFound } from './conversation.types.ts';

/*
 * Adding people to a conversation and taking them out: beside the spec's three operations (the
 * spec has none for members), in the same style: POST under /conversations, the conversation by
 * its slug, the conversation as get_conversation answers it.
 */

export const ZSlugOf = z
  .string()
  .meta({ description: "The conversation's slug, ignoring case (it must match: no fallback)." });
export const ZEmail = z.string().max(EMAIL_MAX_LENGTH).meta({ description: "The person's e-mail address." });

export const conversationAfter = {
  ...listedConversationExample,
  conversation_created_time: '2022-02-01 17:21:09.123456',
  conversation_credated_time_nice: 'February 1st, 2022 05:21PM UTC',
};

export const memberErrors = {
  ...BODY_ERRORS,
  '404': notFound('No conversation of the account has this slug'),
};
