import { z } from 'zod';
import { emailProblem } from './people.ts';
import { ZText } from './schemas.ts';
import { type EpochMicros, microsFromDate } from './time.ts';

/*
 * A workflow: what happens in a conversation without anyone lifting a finger. It is a list of
 * steps, each a trigger (when) and an action (what), declared once here: the API validates a
 * saved workflow with these schemas and publishes them, the seed format reads them, and the
 * runner (apps/api/src/workflows) decides with the functions below when each step is due.
 *
 * A conversation created through an intake page gets a copy of the page's workflow, each step
 * with its state (`ZWorkflowStepState`): a later change of the page's workflow leaves the copy as
 * it was. Work is durable rows: an event (the conversation created, a message posted) is a row
 * the runner expands into step jobs, one per step and occurrence under a unique key, each run at
 * most once.
 */

const DAY = 86_400;
/** The longest delay or silence a step may wait: a year. */
export const MAX_WORKFLOW_DELAY_SECONDS = 365 * DAY;
export const MAX_WORKFLOW_STEPS = 20;
export const MAX_WORKFLOW_REPEATS = 100;
/** How many workflows one account may keep. */
export const MAX_WORKFLOWS = 100;
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
      delay_seconds: ZDelay.optional().meta({ description: 'After the message; 0 when omitted.' }),
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
  .refine((a) => a.type !== 'post_message' || a.text !== undefined || a.recording_message_id !== undefined, {
    message: 'post_message needs text, a recording_message_id, or both',
  })
  .meta({
    id: 'WorkflowAction',
    description:
      'What a step does: post a message as a team member (text and/or a recording kept here), add tags, add ' +
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

const iso = (micros: EpochMicros) => new Date(Number(micros / 1000n)).toISOString();

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
    due_at: due === null ? null : iso(due),
    done_at: null,
    error: null,
    runs: 0,
  };
}

/** A workflow as a conversation holds it: its id and name, and its steps' states. */
export interface WorkflowCopy {
  id: number;
  name: string;
  steps: WorkflowStepState[];
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

export const FOREIGN_STEP = 'copied from elsewhere; this server does not run it';
export const LOADED_STEP = 'loaded with the conversation; not run here';

/**
 * A copy a seed brings (an export of this server, restored): a step in this server's form keeps
 * its state, and one still pending goes on here (`pendingTimers`); a bare step of ours is history,
 * marked skipped; anything else is kept as `original`, skipped.
 */
export function adoptCopiedSteps(steps: readonly unknown[]): WorkflowStepState[] {
  return steps.map((step) => {
    const kept = ZWorkflowStepState.safeParse(step);
    if (kept.success) return kept.data;
    const ours = ZWorkflowStep.safeParse(step);
    const base = { state: 'skipped' as const, due_at: null, done_at: null, runs: 0 };
    return ours.success
      ? { ...ours.data, ...base, error: LOADED_STEP }
      : { trigger: null, action: null, ...base, error: FOREIGN_STEP, original: step };
  });
}

/**
 * A copy brought from another server that may still run it (import-api): history here. Its
 * pending steps are marked skipped, so nothing is done twice.
 */
export const asHistory = (steps: readonly WorkflowStepState[]): WorkflowStepState[] =>
  steps.map((s) => (s.state === 'pending' ? { ...s, state: 'skipped', due_at: null, error: LOADED_STEP } : s));

/** The step jobs a restored copy's pending timers need, to go on where they were. */
export function pendingTimers(
  steps: readonly WorkflowStepState[],
): { step: number; occurrence: string; dueAt: string }[] {
  return steps.flatMap((s, step) => {
    if (s.state !== 'pending' || s.due_at === null || s.trigger === null || s.action === null) return [];
    const occurrence =
      s.trigger.type === 'repeat'
        ? `run:${s.runs + 1}`
        : s.trigger.type === 'conversation.created'
          ? 'created'
          : 'restored';
    return [{ step, occurrence, dueAt: s.due_at }];
  });
}

/** A step that came with a loaded conversation, or from elsewhere: it never runs here. */
const retired = (s: WorkflowStepState): boolean =>
  s.trigger === null ||
  s.action === null ||
  (s.state === 'skipped' && (s.error === LOADED_STEP || s.error === FOREIGN_STEP));

/** The steps of a saved workflow that still parse (a workflow from before steps had a form has none). */
export const runnableSteps = (steps: readonly unknown[]): WorkflowStep[] =>
  steps.flatMap((s) => {
    const parsed = ZWorkflowStep.safeParse(s);
    return parsed.success ? [parsed.data] : [];
  });

/** The steps of a copy (or bare steps) this server can run, as a workflow saves them. */
export const definitionSteps = (steps: readonly unknown[]): WorkflowStep[] =>
  steps.flatMap((s) => {
    const state = ZWorkflowStepState.safeParse(s);
    if (state.success) {
      const { trigger, action } = state.data;
      return trigger && action ? [{ trigger, action }] : [];
    }
    return runnableSteps([s]);
  });

/** Who wrote a message, as triggers tell them apart. */
export type MessageSide = 'team' | 'participant';

/** Something that happened in a conversation with a workflow: what its steps are planned from. */
export type WorkflowEvent = { kind: 'created' } | { kind: 'message'; messageId: number; side: MessageSide };

/** A step job to make: which step, which occurrence (its unique key), and when it is due. */
export interface PlannedStep {
  step: number;
  occurrence: string;
  dueAt: EpochMicros;
  /** The message it answers, for message and silence triggers. */
  messageId: number | null;
}

/**
 * The step jobs an event makes. Conversation and repeat steps were planned at creation (their
 * times are in the copy); a message plans its message steps, and the silences it starts: a
 * participant's message starts the wait for the team, and the other way round.
 */
export function planSteps(steps: readonly WorkflowStepState[], event: WorkflowEvent, at: EpochMicros): PlannedStep[] {
  const planned: PlannedStep[] = [];
  steps.forEach((s, step) => {
    const t = s.trigger;
    if (t === null || retired(s)) return;
    if (event.kind === 'created') {
      if (t.type === 'conversation.created') {
        planned.push({
          step,
          occurrence: 'created',
          dueAt: at + BigInt(t.delay_seconds ?? 0) * 1_000_000n,
          messageId: null,
        });
      } else if (t.type === 'repeat') {
        planned.push({ step, occurrence: 'run:1', dueAt: repeatDueAt(at, t.every, 1), messageId: null });
      }
      return;
    }
    const occurrence = `message:${event.messageId}`;
    if (t.type === 'message.created' && (t.by === 'anyone' || t.by === event.side)) {
      planned.push({
        step,
        occurrence,
        dueAt: at + BigInt(t.delay_seconds ?? 0) * 1_000_000n,
        messageId: event.messageId,
      });
    } else if (t.type === 'no_reply' && t.from !== event.side) {
      planned.push({ step, occurrence, dueAt: at + BigInt(t.within_seconds) * 1_000_000n, messageId: event.messageId });
    }
  });
  return planned;
}

/** The next run of a repeat after run `run`, or null when it has had its last. */
export function nextRepeat(
  trigger: WorkflowTrigger,
  createdAt: EpochMicros,
  run: number,
): { occurrence: string; dueAt: EpochMicros } | null {
  if (trigger.type !== 'repeat' || run >= trigger.times) return null;
  return { occurrence: `run:${run + 1}`, dueAt: repeatDueAt(createdAt, trigger.every, run + 1) };
}

/** A failed step is tried again after 10 s, 1 min, 5 min, 30 min; then it shows as failed. */
export const WORKFLOW_RETRY_SECONDS = [10, 60, 300, 1800];

export const workflowRetryDelaySeconds = (attempts: number): number | null =>
  WORKFLOW_RETRY_SECONDS[attempts - 1] ?? null;

export const NO_REPLY_ANSWERED = 'answered in time';
export const NO_REPLY_SUPERSEDED = 'a newer message started the wait again';

/** What happened to a step's job: how its state in the conversation's copy changes. */
export type StepChange =
  | { kind: 'planned'; dueAt: EpochMicros }
  | { kind: 'done'; at: EpochMicros; nextDueAt: EpochMicros | null }
  | { kind: 'skipped'; reason: string }
  | { kind: 'retry'; reason: string; dueAt: EpochMicros }
  | { kind: 'failed'; reason: string };

/** The copy with one step's state changed (the last thing that happened to it shows). */
export const changeStep = (copy: WorkflowCopy, step: number, change: StepChange): WorkflowCopy => ({
  ...copy,
  steps: copy.steps.map((s, i) => (i === step ? stepAfter(s, change) : s)),
});

function stepAfter(s: WorkflowStepState, change: StepChange): WorkflowStepState {
  switch (change.kind) {
    case 'planned':
      return { ...s, state: 'pending', due_at: iso(change.dueAt), error: null };
    case 'done':
      return {
        ...s,
        state: change.nextDueAt === null ? 'done' : 'pending',
        due_at: change.nextDueAt === null ? null : iso(change.nextDueAt),
        done_at: iso(change.at),
        error: null,
        runs: s.runs + 1,
      };
    case 'skipped':
      return { ...s, state: 'skipped', due_at: null, error: change.reason };
    case 'retry':
      return { ...s, state: 'pending', due_at: iso(change.dueAt), error: change.reason };
    case 'failed':
      return { ...s, state: 'failed', due_at: null, error: change.reason };
  }
}
