import { describe, expect, it } from 'vitest';
import {
  adoptCopiedSteps,
  asHistory,
  changeIntakePage,
  changeStep,
  changeWorkflow,
  copyWorkflow,
  createIntakePage,
  createWorkflow,
  FOREIGN_STEP,
  type IntakePageAdminStore,
  LOADED_STEP,
  nextRepeat,
  pendingTimers,
  planSteps,
  repeatDueAt,
  requireIntakeManager,
  type WorkflowStep,
  type WorkflowStore,
  ZWorkflowSteps,
} from '../src/index.ts';

const at = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const iso = (micros: bigint) => new Date(Number(micros / 1000n)).toISOString();

const steps: WorkflowStep[] = [
  {
    trigger: { type: 'conversation.created', delay_seconds: 30 },
    action: { type: 'post_message', as: 'sam@acme.example', text: 'Welcome' },
  },
  { trigger: { type: 'message.created', by: 'participant' }, action: { type: 'add_tags', tags: ['answered'] } },
  { trigger: { type: 'no_reply', from: 'team', within_seconds: 3600 }, action: { type: 'webhook' } },
  { trigger: { type: 'repeat', every: 'month', times: 2 }, action: { type: 'notify', emails: ['sam@acme.example'] } },
  { trigger: { type: 'no_reply', from: 'participant', within_seconds: 600 }, action: { type: 'webhook' } },
];

describe('the step schema', () => {
  it('takes every trigger and action', () => {
    expect(ZWorkflowSteps.safeParse(steps).success).toBe(true);
  });

  it.each([
    ['an unknown trigger', [{ trigger: { type: 'tuesday' }, action: { type: 'webhook' } }]],
    ['an unknown action', [{ trigger: { type: 'conversation.created' }, action: { type: 'assign' } }]],
    [
      'a negative delay',
      [{ trigger: { type: 'conversation.created', delay_seconds: -1 }, action: { type: 'webhook' } }],
    ],
    [
      'a delay over a year',
      [{ trigger: { type: 'conversation.created', delay_seconds: 366 * 86_400 }, action: { type: 'webhook' } }],
    ],
    [
      'a fractional delay',
      [{ trigger: { type: 'conversation.created', delay_seconds: 1.5 }, action: { type: 'webhook' } }],
    ],
    [
      'a silence under a minute',
      [{ trigger: { type: 'no_reply', from: 'team', within_seconds: 5 }, action: { type: 'webhook' } }],
    ],
    ['a repeat without an end', [{ trigger: { type: 'repeat', every: 'day' }, action: { type: 'webhook' } }]],
    [
      'a message with nothing in it',
      [{ trigger: { type: 'conversation.created' }, action: { type: 'post_message', as: 'a@b.example' } }],
    ],
    [
      'a member who is not an address',
      [{ trigger: { type: 'conversation.created' }, action: { type: 'add_members', emails: ['sam'] } }],
    ],
    [
      'a member more than the step knows',
      [{ trigger: { type: 'conversation.created', x: 1 }, action: { type: 'webhook' } }],
    ],
    ['no steps', []],
    ['21 steps', Array.from({ length: 21 }, () => steps[1])],
  ])('refuses %s', (_, value) => {
    expect(ZWorkflowSteps.safeParse(value).success).toBe(false);
  });
});

describe('a copy and its plan', () => {
  const created = at('2026-01-31T10:00:00Z');
  const copy = copyWorkflow({ id: 1, name: 'W', steps }, created);

  it('starts with the times it knows: creation plus delay, the first repeat; message steps wait', () => {
    expect(copy.steps.map((s) => [s.state, s.due_at])).toEqual([
      ['pending', '2026-01-31T10:00:30.000Z'],
      ['pending', null],
      ['pending', null],
      // The 31st of a month without one is its last day.
      ['pending', '2026-02-28T10:00:00.000Z'],
      ['pending', null],
    ]);
  });

  it('plans creation steps on creation, and a message its triggers and the silence it starts', () => {
    expect(planSteps(copy.steps, { kind: 'created' }, created)).toEqual([
      { step: 0, occurrence: 'created', dueAt: created + 30_000_000n, messageId: null },
      { step: 3, occurrence: 'run:1', dueAt: at('2026-02-28T10:00:00Z'), messageId: null },
    ]);
    const t = at('2026-02-01T00:00:00Z');
    expect(planSteps(copy.steps, { kind: 'message', messageId: 9, side: 'participant' }, t)).toEqual([
      { step: 1, occurrence: 'message:9', dueAt: t, messageId: 9 },
      { step: 2, occurrence: 'message:9', dueAt: t + 3_600_000_000n, messageId: 9 },
    ]);
    // The team's message triggers neither participant step; it starts the wait for the participant.
    expect(planSteps(copy.steps, { kind: 'message', messageId: 10, side: 'team' }, t)).toEqual([
      { step: 4, occurrence: 'message:10', dueAt: t + 600_000_000n, messageId: 10 },
    ]);
  });

  it('limits a message step to replies in a thread, or to messages not in one, when it says so', () => {
    const tag: WorkflowStep['action'] = { type: 'add_tags', tags: ['x'] };
    const threaded = copyWorkflow(
      {
        id: 2,
        name: 'T',
        steps: [
          { trigger: { type: 'message.created', by: 'anyone', in_thread: true }, action: tag },
          { trigger: { type: 'message.created', by: 'anyone', in_thread: false }, action: tag },
          { trigger: { type: 'message.created', by: 'anyone' }, action: tag },
        ],
      },
      created,
    );
    const t = at('2026-02-01T00:00:00Z');
    const steps = (inThread: boolean) =>
      planSteps(threaded.steps, { kind: 'message', messageId: 5, side: 'participant', inThread }, t).map((p) => p.step);
    expect(steps(true)).toEqual([0, 2]);
    expect(steps(false)).toEqual([1, 2]);
    expect(
      ZWorkflowSteps.safeParse([{ trigger: { type: 'message.created', by: 'team', in_thread: 'yes' }, action: tag }])
        .success,
    ).toBe(false);
  });

  it('repeats until its last run, counting from creation', () => {
    const trigger = steps[3]?.trigger as WorkflowStep['trigger'];
    expect(nextRepeat(trigger, created, 1)).toEqual({ occurrence: 'run:2', dueAt: at('2026-03-31T10:00:00Z') });
    expect(nextRepeat(trigger, created, 2)).toBeNull();
    expect(iso(repeatDueAt(created, 'week', 2))).toBe('2026-02-14T10:00:00.000Z');
  });

  it('shows what happened to a step last', () => {
    const done = changeStep(copy, 3, { kind: 'done', at: created + 1n, nextDueAt: at('2026-03-31T10:00:00Z') });
    expect(done.steps[3]).toMatchObject({ state: 'pending', runs: 1, due_at: '2026-03-31T10:00:00.000Z' });
    const failed = changeStep(done, 0, { kind: 'failed', reason: 'sam is not on the team' });
    expect(failed.steps[0]).toMatchObject({ state: 'failed', due_at: null, error: 'sam is not on the team' });
    expect(copy.steps[3]?.runs).toBe(0);
  });

  it('restores a copy with its states and timers; bare and foreign steps are history', () => {
    const restored = adoptCopiedSteps([...copy.steps, steps[1], { action: 'assign', to: 'sam' }]);
    expect(restored.slice(0, 5)).toEqual(copy.steps);
    expect(restored.slice(5).map((s) => [s.state, s.error])).toEqual([
      ['skipped', LOADED_STEP],
      ['skipped', FOREIGN_STEP],
    ]);
    expect(restored[6]).toMatchObject({ trigger: null, action: null, original: { action: 'assign', to: 'sam' } });
    expect(pendingTimers(restored)).toEqual([
      { step: 0, occurrence: 'created', dueAt: '2026-01-31T10:00:30.000Z' },
      { step: 3, occurrence: 'run:1', dueAt: '2026-02-28T10:00:00.000Z' },
    ]);
    // Only the restored copy's own steps plan anything.
    expect(planSteps(restored, { kind: 'message', messageId: 1, side: 'participant' }, created)).toHaveLength(2);
    const history = asHistory(restored);
    expect(history.map((s) => s.state)).toEqual(Array(7).fill('skipped'));
    expect(pendingTimers(history)).toEqual([]);
    expect(planSteps(history, { kind: 'message', messageId: 1, side: 'participant' }, created)).toEqual([]);
  });
});

describe('who saves intake pages and workflows', () => {
  // A store with nothing in it: touching it fails (not a function), so a refusal comes first.
  const untouchable = {};
  const account = { id: 1 };

  it('refuses a team member and a participant, and touches nothing', async () => {
    for (const actor of [{ userId: 2, teamRole: 'member' as const }, { userId: 3, teamRole: null }, null]) {
      const refusals = [
        createWorkflow(untouchable as WorkflowStore, account, { name: 'x', steps: [] }, actor),
        changeWorkflow(untouchable as WorkflowStore, account, 1, { name: 'x' }, actor),
        createIntakePage(untouchable as IntakePageAdminStore, account, { name: 'x' }, actor),
        changeIntakePage(untouchable as IntakePageAdminStore, account, 1, { name: 'x' }, actor),
      ];
      for (const refusal of refusals) await expect(refusal).rejects.toMatchObject({ code: 'forbidden' });
    }
  });

  it('lets owners, admins and the account itself through to the rules', () => {
    expect(() => requireIntakeManager({ userId: 1, teamRole: 'owner' })).not.toThrow();
    expect(() => requireIntakeManager({ userId: 1, teamRole: 'admin' })).not.toThrow();
    expect(() => requireIntakeManager('account')).not.toThrow();
  });
});
