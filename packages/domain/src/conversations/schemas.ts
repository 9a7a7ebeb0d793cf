import { z } from 'zod';
import { byRule } from '../shared/text.ts';
import { SLUG_MAX_LENGTH, SLUG_PATTERN, slugProblem } from './slug.ts';
import { TITLE_MAX_LENGTH, titleProblem } from './title.ts';

/*
 * The rules as zod schemas, for every edge that parses input with zod (the API's procedures, the
 * seed format): each refines through the rule's one function, so no edge states a rule again.
 * The metadata only describes the rule to the OpenAPI document.
 */

export const ZSlug = z
  .string()
  .superRefine(byRule(slugProblem))
  .meta({ minLength: 1, maxLength: SLUG_MAX_LENGTH, pattern: SLUG_PATTERN.source });

export const ZTitle = z.string().superRefine(byRule(titleProblem)).meta({ minLength: 1, maxLength: TITLE_MAX_LENGTH });
