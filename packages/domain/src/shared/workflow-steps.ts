import { z } from 'zod';
import { emailProblem } from './person.ts';
import { ZText } from './text.ts';
import { type EpochMicros, formatIsoMillis, microsFromDate } from './time.ts';

/*
 * A workflow's steps as every area speaks of them: a step is a trigger (when) and an action (what),
 * declared once here as zod schemas (the API validates and publishes them, the seed format reads
 * them), and a conversation's copy of a workflow holds each step with its state. What the runner
 * decides about steps is workflows/rules.ts.
 */

/** Seconds in a day. */
export const DAY = 86_400;

/** The longest delay or silence a step may wait: a year. */
export const MAX_WORKFLOW_DELAY_SECONDS = 365 * DAY;

export const MAX_WORKFLOW_STEPS = 20;
export const MAX_WORKFLOW_REPEATS = 100;

const MAX_LIST = 20;

const ZDelay = z
  .number()
  .int()
  .min(0)
  .max(MAX_WORKFLOW_DELAY_SECONDS)
  .meta({ description: `Seconds to wait, 0 to ${MAX_WORKFLOW_DELAY_SECONDS} (a year).` });

const ZEmail = z
  .string()
  .superRefine((value, ctx) => {
    const problem = emailProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: value });
  })
  .meta({ format: 'email' });

export const ZWorkflowTrigger = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('conversation.created'),
      delay_seconds: ZDelay.optional().meta({ description: 'After the conversation is created; 0 when omitted.' }),
    }),
    z.strictObject({
      type: z.literal('message.created'),
      by: z.enum(['participant', 'team', 'anyone']).meta({
        description:
          'Whose message: a participant (anyone not on the team, anonymous included), a team member, or anyone. ' +
          'Messages a workflow posts never trigger a step.',
      }),
      in_thread: z
        .boolean()
        .optional()
        .meta({
          description:
            '`true`: only replies in a thread (`parent_message_id`); `false`: only messages of the conversation ' +
            'itself; omitted: either.',
        }),
      delay_seconds: ZDelay.optional().meta({ description: 'After the message; 0 when omitted.' }),
    }),
    z.strictObject({
      type: z.literal('message.played'),
      by: z.enum(['participant', 'team', 'anyone']).meta({
        description:
          'Whose recorded message was played: a participant’s, a team member’s (a welcome video the team sent), or ' +
          'anyone’s. Runs once per message, at its first played receipt (5 s or 75 % watched by the other side).',
      }),
      delay_seconds: ZDelay.optional().meta({ description: 'After the play; 0 when omitted.' }),
    }),
    z.strictObject({
      type: z.literal('no_reply'),
      from: z.enum(['team', 'participant']).meta({
        description:
          '`team`: a participant wrote and no team member answered within `within_seconds`. `participant`: the ' +
          'team wrote and no participant answered. Runs once per silence: a newer message starts the wait again.',
      }),
      within_seconds: z.number().int().min(60).max(MAX_WORKFLOW_DELAY_SECONDS),
    }),
    z.strictObject({
      type: z.literal('repeat'),
      every: z.enum(['day', 'week', 'month']).meta({ description: 'Counted from the conversation’s creation.' }),
      times: z.number().int().min(1).max(MAX_WORKFLOW_REPEATS).meta({ description: 'Runs in all, then it ends.' }),
    }),
  ])
  .meta({ id: 'WorkflowTrigger', description: 'When a step runs.' });

export const ZWorkflowAction = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('post_message'),
      as: ZEmail.meta({ description: 'The team member the message is posted as, by e-mail address.' }),
      text: ZText('text').pipe(z.string().max(10_000)).optional(),
      recording_message_id: z.number().int().min(1).max(2_147_483_647).optional().meta({
        description: 'A message of this account whose recording (kept by this server) is posted again.',
      }),
      template_id: z
        .number()
        .int()
        .min(1)
        .max(2_147_483_647)
        .optional()
        .meta({
          description:
            'A message template of this account, as create_message takes one: its text replaces `text` (a template ' +
            'without text puts `text` under its recording), its recording is posted, and the message keeps its name. ' +
            'Read when the step runs: a template changed since posts as it is then; one deleted fails the step.',
        }),
    }),
    z.strictObject({
      type: z.literal('add_tags'),
      tags: z
        .array(ZText('tag').pipe(z.string().trim().min(1).max(100)))
        .min(1)
        .max(MAX_LIST),
    }),
    z.strictObject({
      type: z.literal('add_members'),
      emails: z.array(ZEmail).min(1).max(MAX_LIST).meta({ description: 'People of the account, by e-mail address.' }),
    }),
    z.strictObject({
      type: z.literal('notify'),
      emails: z.array(ZEmail).min(1).max(MAX_LIST).meta({ description: 'Team members, by e-mail address.' }),
      text: ZText('text').pipe(z.string().max(2_000)).optional().meta({ description: 'A line for the mail.' }),
    }),
    z.strictObject({
      type: z.literal('webhook'),
    }),
  ])
  .refine(
    (a) =>
      a.type !== 'post_message' ||
      a.text !== undefined ||
      a.recording_message_id !== undefined ||
      a.template_id !== undefined,
    { message: 'post_message needs text, a recording_message_id or a template_id' },
  )
  .meta({
    id: 'WorkflowAction',
    description:
      'What a step does: post a message as a team member (text and/or a recording kept here, or a template), add tags, add ' +
      'people as members, mail team members, or send the `workflow_step` webhook event.',
  });

export const ZWorkflowStep = z
  .strictObject({ trigger: ZWorkflowTrigger, action: ZWorkflowAction })
  .meta({ id: 'WorkflowStep' });

export const ZWorkflowSteps = z.array(ZWorkflowStep).min(1).max(MAX_WORKFLOW_STEPS);

export type WorkflowTrigger = z.infer<typeof ZWorkflowTrigger>;

export type WorkflowAction = z.infer<typeof ZWorkflowAction>;

export type WorkflowStep = z.infer<typeof ZWorkflowStep>;

export const WORKFLOW_STEP_STATES = ['pending', 'done', 'failed', 'skipped'] as const;

export type WorkflowStepStateName = (typeof WORKFLOW_STEP_STATES)[number];

/** A step of a conversation's copy of its workflow, with what it is doing there. */
export const ZWorkflowStepState = z
  .object({
    trigger: ZWorkflowTrigger.nullable().meta({
      description: 'null only for a step copied from another server that this server cannot run (see `original`).',
    }),
    action: ZWorkflowAction.nullable(),
    state: z.enum(WORKFLOW_STEP_STATES).meta({
      description:
        '`pending`: waiting, until `due_at` (null: for its trigger, such as a message). `done`: ran at ' +
        '`done_at`. `failed`: gave up after retries, `error` says why. `skipped`: not run, `error` says why (an ' +
        'answer came in time, or the step was copied from elsewhere).',
    }),
    due_at: z.string().nullable().meta({ description: 'ISO 8601, UTC.' }),
    done_at: z.string().nullable().meta({ description: 'ISO 8601, UTC: its last run.' }),
    error: z.string().nullable(),
    runs: z.number().int().meta({ description: 'How many times it has run in this conversation.' }),
    original: z.unknown().optional().meta({ description: 'A step copied from elsewhere, as it came.' }),
  })
  .meta({ id: 'WorkflowStepState' });

export type WorkflowStepState = z.infer<typeof ZWorkflowStepState>;

/** A workflow as a conversation holds it: its id and name, and its steps' states. */
export interface WorkflowCopy {
  id: number;
  name: string;
  steps: WorkflowStepState[];
}

const SECONDS_PER: Record<'day' | 'week', number> = { day: DAY, week: 7 * DAY };

/** When run `run` (1-based) of a repeat falls, counted from the conversation's creation. */
export function repeatDueAt(createdAt: EpochMicros, every: 'day' | 'week' | 'month', run: number): EpochMicros {
  if (every === 'month') {
    const at = new Date(Number(createdAt / 1000n));
    const day = at.getUTCDate();
    at.setUTCDate(1);
    at.setUTCMonth(at.getUTCMonth() + run);
    // The 31st of a month without one is its last day.
    const last = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)).getUTCDate();
    at.setUTCDate(Math.min(day, last));
    return microsFromDate(at) + (createdAt % 1000n);
  }
  return createdAt + BigInt(SECONDS_PER[every] * run) * 1_000_000n;
}

/** A step as a new conversation's copy starts it: due now only when its time is known. */
function initialState(step: WorkflowStep, createdAt: EpochMicros): WorkflowStepState {
  const t = step.trigger;
  const due =
    t.type === 'conversation.created'
      ? createdAt + BigInt(t.delay_seconds ?? 0) * 1_000_000n
      : t.type === 'repeat'
        ? repeatDueAt(createdAt, t.every, 1)
        : null;
  return {
    trigger: step.trigger,
    action: step.action,
    state: 'pending',
    due_at: due === null ? null : formatIsoMillis(due),
    done_at: null,
    error: null,
    runs: 0,
  };
}

/** The copy a conversation created now gets of a workflow whose steps are valid. */
export const copyWorkflow = (
  workflow: { id: number; name: string; steps: readonly WorkflowStep[] },
  createdAt: EpochMicros,
): WorkflowCopy => ({
  id: workflow.id,
  name: workflow.name,
  steps: workflow.steps.map((s) => initialState(s, createdAt)),
});
