import { type EpochMicros, formatIsoMillis } from '../shared/time.ts';
import type { WorkflowCopy, WorkflowStep, WorkflowStepState, WorkflowTrigger } from '../shared/workflow-steps.ts';
import { repeatDueAt, ZWorkflowStep, ZWorkflowStepState } from '../shared/workflow-steps.ts';

/*
 * A workflow: what happens in a conversation without anyone lifting a finger. It is a list of
 * steps, each a trigger (when) and an action (what), declared once here: the API validates a
 * saved workflow with these schemas and publishes them, the seed format reads them, and the
 * runner (apps/api/src/workers/workflows.ts) decides with the functions below when each step is due.
 *
 * A conversation created through an intake page gets a copy of the page's workflow, each step
 * with its state (`ZWorkflowStepState`): a later change of the page's workflow leaves the copy as
 * it was. Work is durable rows: an event (the conversation created, a message posted) is a row
 * the runner expands into step jobs, one per step and occurrence under a unique key, each run at
 * most once.
 */

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
export type WorkflowEvent =
  | { kind: 'created' }
  /** A message: whose side wrote it, and whether it replies in a thread. */
  | { kind: 'message'; messageId: number; side: MessageSide; inThread?: boolean }
  /** A played receipt of a message: whose side wrote the message. */
  | { kind: 'played'; messageId: number; side: MessageSide };

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
    if (event.kind === 'played') {
      // Once per message: its first counted play (a job's occurrence is unique per step).
      if (t.type === 'message.played' && (t.by === 'anyone' || t.by === event.side)) {
        const dueAt = at + BigInt(t.delay_seconds ?? 0) * 1_000_000n;
        planned.push({ step, occurrence: `played:${event.messageId}`, dueAt, messageId: event.messageId });
      }
      return;
    }
    const occurrence = `message:${event.messageId}`;
    const threadFits =
      t.type !== 'message.created' || t.in_thread === undefined || t.in_thread === (event.inThread === true);
    if (t.type === 'message.created' && (t.by === 'anyone' || t.by === event.side) && threadFits) {
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
      return { ...s, state: 'pending', due_at: formatIsoMillis(change.dueAt), error: null };
    case 'done':
      return {
        ...s,
        state: change.nextDueAt === null ? 'done' : 'pending',
        due_at: change.nextDueAt === null ? null : formatIsoMillis(change.nextDueAt),
        done_at: formatIsoMillis(change.at),
        error: null,
        runs: s.runs + 1,
      };
    case 'skipped':
      return { ...s, state: 'skipped', due_at: null, error: change.reason };
    case 'retry':
      return { ...s, state: 'pending', due_at: formatIsoMillis(change.dueAt), error: change.reason };
    case 'failed':
      return { ...s, state: 'failed', due_at: null, error: change.reason };
  }
}
