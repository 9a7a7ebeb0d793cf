import type { OutgoingMail } from '../shared/mail.ts';
import type { EpochMicros } from '../shared/time.ts';
import { type AccountAddress, conversationUrl } from '../shared/urls.ts';
import type { WorkflowCopy, WorkflowStepState } from '../shared/workflow-steps.ts';
import type { WebhookEnvelope } from '../webhooks/events.ts';
import { type MessageSide, NO_REPLY_ANSWERED, NO_REPLY_SUPERSEDED, nextRepeat, planSteps } from './rules.ts';

/*
 * One due step of a conversation's workflow, decided and done. The runner (apps/api/src/workers/workflows.ts)
 * claims the step's job in a transaction, with the conversation's row locked, and calls this with
 * that transaction's actions: whatever the step writes (a message, tags, members, a queued mail,
 * a webhook event) commits with the job's new state or not at all, so a step runs at most once
 * per conversation and occurrence.
 */

/** A step job as the runner claimed it. */
export interface WorkflowJob {
  id: number;
  step: number;
  /** Its unique key beside the step: `created`, `message:<id>`, `run:<n>`. */
  occurrence: string;
  /** The message it answers (message and silence triggers). */
  messageId: number | null;
  /** Attempts made before this one. */
  attempts: number;
}

/** What a step acts on. */
export interface WorkflowStepContext {
  account: AccountAddress & { id: number; name: string };
  conversation: { id: number; slug: string; title: string; createdAt: EpochMicros; workflow: WorkflowCopy };
  job: WorkflowJob;
}

/** What a step may do, inside the runner's transaction. Each refusal is a sentence for `error`. */
export interface WorkflowActions {
  /** Whether the other side answered after `messageId`, and whether `side` wrote again since (messages people wrote). */
  silenceSince(messageId: number, side: MessageSide): Promise<{ answered: boolean; superseded: boolean }>;
  /** Posts as the team member with this address (null: done; else why not). */
  postMessage(input: {
    as: string;
    text: string;
    recordingMessageId: number | null;
    templateId: number | null;
  }): Promise<string | null>;
  addTags(tags: string[]): Promise<void>;
  /** Adds the account's people with these addresses; the addresses that are nobody's come back. */
  addMembers(emails: string[]): Promise<string[]>;
  /** The team members among these addresses. */
  teamMembers(emails: string[]): Promise<{ email: string; name: string }[]>;
  enqueueMail(mail: OutgoingMail): Promise<void>;
  /** Records the event for the endpoints subscribed to it (none: nothing is written). */
  emitEvent(envelope: WebhookEnvelope): Promise<void>;
}

/** A step that cannot be done now: tried again with backoff, then shown as failed with this reason. */
export class WorkflowStepFailed extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'WorkflowStepFailed';
  }
}

export type WorkflowStepOutcome =
  | { state: 'done'; next: { occurrence: string; dueAt: EpochMicros } | null }
  | { state: 'skipped'; reason: string };

const sideOf = (occurrence: string, step: WorkflowStepState): MessageSide | null =>
  step.trigger?.type === 'no_reply' && occurrence.startsWith('message:')
    ? step.trigger.from === 'team'
      ? 'participant'
      : 'team'
    : null;

/** The mail a `notify` step sends each team member it names. */
export function workflowNotifyMail(
  ctx: WorkflowStepContext,
  to: { email: string; name: string },
  line: string | undefined,
): OutgoingMail {
  const url = conversationUrl(ctx.account, ctx.conversation.slug);
  return {
    to: to.email,
    subject: `${ctx.conversation.workflow.name}: ${ctx.conversation.title}`,
    text: [
      `Hello ${to.name},`,
      '',
      line ?? `The workflow "${ctx.conversation.workflow.name}" asks you to look at this conversation.`,
      '',
      `${ctx.conversation.title}`,
      url,
      '',
      `— ${ctx.account.name}`,
    ].join('\n'),
  };
}

export async function runWorkflowStep(
  actions: WorkflowActions,
  ctx: WorkflowStepContext,
  at: Date,
): Promise<WorkflowStepOutcome> {
  const step = ctx.conversation.workflow.steps[ctx.job.step];
  if (!step?.trigger || !step.action) return { state: 'skipped', reason: 'the step is no longer in the workflow' };
  const writer = sideOf(ctx.job.occurrence, step);
  if (writer !== null && ctx.job.messageId !== null) {
    const silence = await actions.silenceSince(ctx.job.messageId, writer);
    if (silence.answered) return { state: 'skipped', reason: NO_REPLY_ANSWERED };
    if (silence.superseded) return { state: 'skipped', reason: NO_REPLY_SUPERSEDED };
  }
  const a = step.action;
  switch (a.type) {
    case 'post_message': {
      const refused = await actions.postMessage({
        as: a.as,
        text: a.text ?? '',
        recordingMessageId: a.recording_message_id ?? null,
        templateId: a.template_id ?? null,
      });
      if (refused) throw new WorkflowStepFailed(refused);
      break;
    }
    case 'add_tags':
      await actions.addTags(a.tags);
      break;
    case 'add_members': {
      const missing = await actions.addMembers(a.emails);
      if (missing.length > 0) throw new WorkflowStepFailed(`not among the account's people: ${missing.join(', ')}`);
      break;
    }
    case 'notify': {
      const team = await actions.teamMembers(a.emails);
      const found = new Set(team.map((m) => m.email.toLowerCase()));
      const missing = a.emails.filter((e) => !found.has(e.trim().toLowerCase()));
      if (missing.length > 0) throw new WorkflowStepFailed(`no longer on the team: ${missing.join(', ')}`);
      for (const member of team) await actions.enqueueMail(workflowNotifyMail(ctx, member, a.text));
      break;
    }
    case 'webhook':
      await actions.emitEvent({
        type: 'workflow_step',
        timestamp: at.toISOString(),
        data: {
          conversation: { id: ctx.conversation.id, slug: ctx.conversation.slug },
          workflow: { id: ctx.conversation.workflow.id, name: ctx.conversation.workflow.name },
          step: ctx.job.step,
          trigger: step.trigger,
          action: step.action,
          message_id: ctx.job.messageId,
        },
      });
      break;
  }
  const run = Number(/^run:(\d+)$/.exec(ctx.job.occurrence)?.[1] ?? 0);
  return { state: 'done', next: run > 0 ? nextRepeat(step.trigger, ctx.conversation.createdAt, run) : null };
}

/** Where workflows' work is kept: events to plan steps from, and step jobs due at a time. */
export interface WorkflowJobStore {
  /** Takes up to `limit` events, makes the step jobs `plan` says, and shows them; the number taken. */
  expandEvents(limit: number, plan: typeof planSteps): Promise<number>;
  /** Takes up to `limit` due steps and does each with `run`, in one transaction; the number taken. */
  runDueSteps(limit: number, run: typeof runWorkflowStep): Promise<number>;
}

/** One round of the runner: new events planned, then due steps run. False when there was nothing to do. */
export async function advanceWorkflows(store: WorkflowJobStore, batch = 100): Promise<boolean> {
  const planned = await store.expandEvents(batch, planSteps);
  const ran = await store.runDueSteps(batch, runWorkflowStep);
  return planned + ran > 0;
}
