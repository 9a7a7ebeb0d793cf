import { createIntakePage, PgWorkflowJobs, type TSeed } from '@convo/db';
import { advanceWorkflows, NO_REPLY_ANSWERED, planSteps, WORKFLOW_RETRY_SECONDS } from '@convo/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import type { QueueWorker } from '../src/workers/queue-worker.ts';
import { startWorkflowWorker } from '../src/workers/workflows.ts';
import { apiCall, auth, type Harness, rows } from './support/harness.ts';
import { mailTo, openPeopleSite, type PeopleSite, signIn } from './support/people.ts';
import { Visitor } from './support/site.ts';

/*
 * Workflows as they run: saved through the API (and refused when wrong), copied onto a
 * conversation created through an intake page, and run by the real worker from durable rows:
 * each trigger and action, timers that fall due while no worker runs, two workers racing, and a
 * step that keeps failing.
 */

const HOST = 'https://flow.example.com';
const TOKEN = 'flow-api-token-0123456789';
const OTHER_TOKEN = 'else-api-token-0123456789';

const SEED: TSeed = {
  accounts: [
    {
      key: 'flow',
      name: 'Flow',
      host: HOST,
      owner: 'olivia@flow.example',
      tokens: [{ name: 'api', token: TOKEN }],
      defaults: { anyone_can_post: true, allow_anonymous_messages: true, allow_search_engines: false },
      users: [
        { email: 'olivia@flow.example', name: 'Olivia Owner', team: 'owner' },
        { email: 'sam@flow.example', name: 'Sam Support', team: 'member' },
        { email: 'pat@customer.example', name: 'Pat Participant' },
      ],
    },
    {
      key: 'else',
      name: 'Else',
      host: 'https://else.example.com',
      owner: 'eve@else.example',
      tokens: [{ name: 'api', token: OTHER_TOKEN }],
      users: [{ email: 'eve@else.example', name: 'Eve', team: 'owner' }],
    },
  ],
};

let site: PeopleSite;
let h: Harness;
let worker: QueueWorker;

beforeAll(async () => {
  site = await openPeopleSite(SEED);
  h = site.h;
  worker = startWorkflowWorker(h.services.workflowJobs, { logger: createLogger('silent'), intervalMs: 50 });
});
afterAll(async () => {
  await worker?.stop();
  await site?.close();
});

const api = (method: string, path: string, body?: unknown, token = TOKEN) =>
  apiCall(h, method, path, auth(token), body);

const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  h.db.orm.em.fork().getConnection().execute(text, params) as Promise<T[]>;

const accountId = async (key: string) =>
  Number((await sql<{ id: number }>('select id from account where key = ?', [key]))[0]?.id);

/** A conversation created through a new intake page applying `steps`; its slug. */
async function throughPage(name: string, steps: unknown[]): Promise<{ slug: string; workflowId: number }> {
  const saved = await api('POST', '/workflows', { name, steps });
  expect(saved.status).toBe(201);
  const page = await createIntakePage(h.db.orm.em.fork(), await accountId('flow'), {
    name,
    primary: false,
    workflowId: saved.body.id,
  });
  const created = await api('POST', '/conversations/create_conversation', { intake_page_id: page.id, title: name });
  expect(created.status).toBe(201);
  return { slug: created.body.slug, workflowId: saved.body.id };
}

const conversation = async (slug: string) => (await api('GET', `/conversations/get_conversation?slug=${slug}`)).body;

/** Workflow events not yet planned (the worker takes them within its interval). */
const pendingEvents = async () =>
  (await sql<{ n: number }>('select count(*)::int as n from workflow_event'))[0]?.n ?? 0;

/** Waits until `check` holds for the conversation (the worker runs every 50 ms). */
async function until(slug: string, check: (c: any) => boolean | Promise<boolean>): Promise<any> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const c = await conversation(slug);
    if (await check(c)) return c;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${JSON.stringify(c.workflow)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Moves a conversation's pending jobs of `step` to now, as if their time had come. */
const fastForward = async (slug: string, step: number) =>
  sql(
    `update workflow_job set due_at = now() - interval '1 second' where state = 'pending' and step = ?
     and conversation_id = (select id from conversation where slug = ?)`,
    [step, slug],
  );

const jobs = (slug: string) =>
  sql<{ step: number; occurrence: string; state: string; attempts: number; last_error: string | null }>(
    `select step, occurrence, state, attempts, last_error from workflow_job
     where conversation_id = (select id from conversation where slug = ?) order by id`,
    [slug],
  );

describe('saving a workflow', () => {
  const step = { trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['x'] } };

  it.each([
    ['an unknown trigger', [{ ...step, trigger: { type: 'on_tuesday' } }], /trigger/],
    ['an unknown action', [{ ...step, action: { type: 'assign', to: 'sam' } }], /action/],
    ['a bad delay', [{ ...step, trigger: { type: 'conversation.created', delay_seconds: -5 } }], /delay_seconds/],
    ['no steps', [], /steps/],
    [
      'a message from someone not on the team',
      [{ ...step, action: { type: 'post_message', as: 'pat@customer.example', text: 'Hi' } }],
      /pat@customer\.example is not on the account's team/,
    ],
    [
      "another account's person",
      [{ ...step, action: { type: 'add_members', emails: ['eve@else.example'] } }],
      /eve@else\.example is not one of the account's people/,
    ],
    [
      "another account's recording",
      [{ ...step, action: { type: 'post_message', as: 'sam@flow.example', recording_message_id: 1 } }],
      /has no recording kept here/,
    ],
    [
      "another account's message template",
      [{ ...step, action: { type: 'post_message', as: 'sam@flow.example', template_id: 2_000_000_000 } }],
      /template_id: no message template 2000000000 in this account/,
    ],
    [
      'a post_message with nothing to post',
      [{ ...step, action: { type: 'post_message', as: 'sam@flow.example' } }],
      /post_message needs text, a recording_message_id or a template_id/,
    ],
    [
      'a recording id past the column (2^31)',
      [{ ...step, action: { type: 'post_message', as: 'sam@flow.example', recording_message_id: 2 ** 31 } }],
      /recording_message_id/,
    ],
  ])('refuses %s with a clear 422, saving nothing', async (_, steps, message) => {
    const before = (await api('GET', '/workflows')).body.workflows.length;
    const r = await api('POST', '/workflows', { name: 'Refused', steps });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({ error: expect.stringMatching(message), code: 'invalid_input' });
    expect((await api('GET', '/workflows')).body.workflows).toHaveLength(before);
  });

  it("changes, disables and enables a workflow; another account's is not found", async () => {
    const made = await api('POST', '/workflows', { name: 'Changing', steps: [step] });
    const disabled = await api('PATCH', `/workflows/${made.body.id}`, { disabled: true, name: 'Changed' });
    expect(disabled.body).toMatchObject({ id: made.body.id, name: 'Changed', disabled: true, steps: [step] });
    expect((await api('PATCH', `/workflows/${made.body.id}`, { disabled: false })).body.disabled).toBe(false);
    const foreign = await api('PATCH', `/workflows/${made.body.id}`, { disabled: true }, OTHER_TOKEN);
    expect({ status: foreign.status, body: foreign.body }).toEqual({
      status: 404,
      body: { error: 'no workflow with this id in this account', code: 'workflow_not_found' },
    });
    expect((await api('GET', '/workflows', undefined, OTHER_TOKEN)).body.workflows).toEqual([]);
  });
});

describe('a conversation created through an intake page', () => {
  it('runs its creation steps: a welcome message, tags, members, a mail and a webhook event', async () => {
    const { slug, workflowId } = await throughPage('Welcome', [
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'post_message', as: 'sam@flow.example', text: 'Thanks for writing!' },
      },
      { trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['support', 'new'] } },
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'add_members', emails: ['sam@flow.example', 'pat@customer.example'] },
      },
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'notify', emails: ['sam@flow.example'], text: 'A new conversation came in.' },
      },
      { trigger: { type: 'conversation.created' }, action: { type: 'webhook' } },
    ]);
    const c = await until(slug, (c) => c.workflow.steps.every((s: { state: string }) => s.state === 'done'));
    expect(c.workflow).toMatchObject({ id: workflowId, name: 'Welcome' });
    expect(c.workflow.steps.every((s: { runs: number; done_at: string }) => s.runs === 1 && s.done_at)).toBe(true);
    expect(c.messages).toMatchObject([
      { text: 'Thanks for writing!', author: { anonymous: false, email: 'sam@flow.example' } },
    ]);
    expect(c.tags.map((t: { name: string }) => t.name).sort()).toEqual(['new', 'support']);
    // The team's inbox search finds the words the step posted.
    const [searched] = await sql<{ found: boolean }>(
      `select (to_tsvector('simple', title) || said) @@ to_tsquery('simple', 'writing') as found from conversation where id = ?`,
      [c.id],
    );
    expect(searched?.found).toBe(true);
    expect(c.users.map((u: { email: string }) => u.email).sort()).toEqual([
      'olivia@flow.example',
      'pat@customer.example',
      'sam@flow.example',
    ]);
    const mail = await mailTo(site.mailbox, 'sam@flow.example', /A new conversation came in\./);
    expect(mail.text).toContain(`${HOST}/c/${slug}`);
    const [event] = await sql<{ payload: string }>(
      `select payload from webhook_event where type = 'workflow_step' and conversation_id = ?`,
      [c.id],
    );
    // No endpoint is subscribed in this account: the event is written only where one is.
    expect(event).toBeUndefined();
    // Each step ran once: its job is done, and nothing is left to run.
    expect((await jobs(slug)).map((j) => j.state)).toEqual(['done', 'done', 'done', 'done', 'done']);
  });

  it('emits workflow_step to a subscribed endpoint', async () => {
    const flow = await accountId('flow');
    await sql(
      `insert into webhook_endpoint (account_id, url, events, secret) values (?, 'https://hooks.example.com/x', '{workflow_step}', 'whsec_x')`,
      [flow],
    );
    try {
      const { slug, workflowId } = await throughPage('Hook', [
        { trigger: { type: 'conversation.created' }, action: { type: 'webhook' } },
      ]);
      const c = await until(slug, (c) => c.workflow.steps[0].state === 'done');
      // The body as it will be sent, kept with the event (the JSON text, as a JSON string).
      const [event] = await sql<{ payload: string }>(
        `select payload from webhook_event where type = 'workflow_step' and conversation_id = ?`,
        [c.id],
      );
      expect(JSON.parse(event?.payload as string)).toMatchObject({
        type: 'workflow_step',
        data: {
          conversation: { id: c.id, slug },
          workflow: { id: workflowId, name: 'Hook' },
          step: 0,
          action: { type: 'webhook' },
          message_id: null,
        },
      });
    } finally {
      await sql('delete from webhook_endpoint where account_id = ?', [flow]);
    }
  });

  it('posts a message template as it is when the step runs, and fails the step once it is gone', async () => {
    const template = await api('POST', '/message_templates', {
      name: 'Welcome words',
      text: '<p>Welcome <b>aboard</b>!</p>',
    });
    expect(template.status).toBe(201);
    const { slug } = await throughPage('Templated', [
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'post_message', as: 'sam@flow.example', template_id: template.body.id, text: 'not this' },
      },
    ]);
    const c = await until(slug, (c) => c.workflow.steps[0].state === 'done');
    expect(c.messages).toMatchObject([
      { text: '<p>Welcome <b>aboard</b>!</p>', author: { email: 'sam@flow.example' } },
    ]);
    const [posted] = (await api('GET', `/messages/get_messages?conversation_slug=${slug}`)).body.messages;
    expect(posted.message_template).toEqual({ id: template.body.id, name: 'Welcome words' });

    const later = await throughPage('Templated later', [
      {
        trigger: { type: 'conversation.created', delay_seconds: 3600 },
        action: { type: 'post_message', as: 'sam@flow.example', template_id: template.body.id },
      },
    ]);
    await until(later.slug, async () => (await jobs(later.slug)).length === 1);
    expect((await api('DELETE', `/message_templates/${template.body.id}`)).status).toBe(200);
    for (let attempt = 1; attempt <= WORKFLOW_RETRY_SECONDS.length + 1; attempt++) {
      await fastForward(later.slug, 0);
      await until(later.slug, async () => (await jobs(later.slug))[0]?.attempts === attempt);
    }
    const failed = await until(later.slug, (c) => c.workflow.steps[0].state === 'failed');
    expect(failed.workflow.steps[0].error).toBe(`message template ${template.body.id} is gone`);
    expect(failed.messages).toEqual([]);
  });

  it('runs a step limited to thread replies for a reply in a thread alone', async () => {
    const { slug } = await throughPage('Threaded', [
      {
        trigger: { type: 'message.created', by: 'anyone', in_thread: true },
        action: { type: 'add_tags', tags: ['threaded'] },
      },
    ]);
    const c = await conversation(slug);
    const root = await api('POST', '/messages/create_message', { conversation_id: c.id, text: 'Top level' });
    expect(root.status).toBe(201);
    await until(slug, async () => (await jobs(slug)).length === 0 && (await pendingEvents()) === 0);
    expect((await conversation(slug)).tags).toEqual([]);
    const reply = await api('POST', '/messages/create_message', {
      conversation_id: c.id,
      text: 'In the thread',
      parent_message_id: root.body.id,
    });
    expect(reply.status).toBe(201);
    const tagged = await until(slug, (x) => x.tags.length > 0);
    expect(tagged.tags.map((t: { name: string }) => t.name)).toEqual(['threaded']);
  });

  it('runs a message.played step once, at the first receipt of the team’s recording', async () => {
    const { slug } = await throughPage('Watched', [
      { trigger: { type: 'message.played', by: 'team' }, action: { type: 'add_tags', tags: ['watched'] } },
    ]);
    const c = await conversation(slug);
    const welcome = await api('POST', '/messages/create_message', {
      conversation_id: c.id,
      user_email: 'sam@flow.example',
      text: 'Welcome',
    });
    expect(welcome.status).toBe(201);
    // A recording kept here (its row: the play reads nothing of its bytes).
    await rows(
      h,
      `update message set message_type = 'audio', media_key = 'flow/welcome', media_content_type = 'audio/webm',
         media_bytes = 1000 where id = ?`,
      [welcome.body.id],
    );
    // The play as the site's beacon keeps it (the beacon itself: plays.test.ts), by two visitors.
    for (const session of ['first-visitor', 'second-visitor']) {
      expect(
        await h.services.plays.record([
          { accountId: await accountId('flow'), messageId: welcome.body.id, viewerId: null, sessionKey: session },
        ]),
      ).toBe(1);
    }
    const tagged = await until(slug, (x) => x.tags.length > 0);
    expect(tagged.tags.map((t: { name: string }) => t.name)).toEqual(['watched']);
    // One job for the message, whatever the plays.
    await until(slug, async () => (await pendingEvents()) === 0);
    expect((await jobs(slug)).map((j) => [j.occurrence, j.state])).toEqual([[`played:${welcome.body.id}`, 'done']]);
  });

  it("keeps its copy when the page's workflow changes later", async () => {
    const { slug, workflowId } = await throughPage('Kept', [
      { trigger: { type: 'repeat', every: 'week', times: 1 }, action: { type: 'add_tags', tags: ['weekly'] } },
    ]);
    await api('PATCH', `/workflows/${workflowId}`, {
      name: 'Renamed',
      steps: [{ trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['other'] } }],
    });
    const c = await conversation(slug);
    expect(c.workflow).toMatchObject({
      name: 'Kept',
      steps: [{ trigger: { type: 'repeat' }, action: { tags: ['weekly'] }, state: 'pending' }],
    });
  });

  it('runs message steps for the right side, and never for a message a step posted', async () => {
    const { slug } = await throughPage('Messages', [
      {
        trigger: { type: 'conversation.created' },
        action: { type: 'post_message', as: 'sam@flow.example', text: 'Welcome' },
      },
      { trigger: { type: 'message.created', by: 'participant' }, action: { type: 'add_tags', tags: ['answered'] } },
      { trigger: { type: 'message.created', by: 'team' }, action: { type: 'add_tags', tags: ['team-wrote'] } },
    ]);
    await until(slug, (c) => c.workflow.steps[0].state === 'done');
    // The welcome message is the team's, but a step's: no team step ran.
    expect((await conversation(slug)).workflow.steps[2]).toMatchObject({ state: 'pending', runs: 0 });
    expect((await new Visitor(h, HOST).reply(slug, { text: 'Hello from a visitor' })).status).toBe(303);
    const c = await until(slug, (c) => c.workflow.steps[1].state === 'done');
    expect(c.tags.map((t: { name: string }) => t.name)).toEqual(['answered']);
    expect(c.workflow.steps[2]).toMatchObject({ state: 'pending', runs: 0 });
    const sam = await signIn(site, HOST, 'sam@flow.example');
    expect((await sam.reply(slug, { text: 'Sam answers' })).status).toBe(303);
    const after = await until(slug, (c) => c.workflow.steps[2].state === 'done');
    expect(after.tags.map((t: { name: string }) => t.name).sort()).toEqual(['answered', 'team-wrote']);
    expect(after.workflow.steps[1]).toMatchObject({ runs: 1 });
  });
});

describe('silences and repeats', () => {
  const nudge = [
    {
      trigger: { type: 'no_reply', from: 'team', within_seconds: 3600 },
      action: { type: 'notify', emails: ['olivia@flow.example'], text: 'Nobody answered within the hour.' },
    },
  ];

  it('waits for the team after a participant writes, and runs when nobody answered in time', async () => {
    const { slug } = await throughPage('Nudge', nudge);
    expect((await new Visitor(h, HOST).reply(slug, { text: 'Anyone there?' })).status).toBe(303);
    const waiting = await until(slug, (c) => c.workflow.steps[0].due_at !== null);
    const due = Date.parse(waiting.workflow.steps[0].due_at);
    expect(due - Date.now()).toBeGreaterThan(3500_000);
    await fastForward(slug, 0);
    await until(slug, (c) => c.workflow.steps[0].state === 'done');
    await mailTo(site.mailbox, 'olivia@flow.example', /Nobody answered within the hour\./);
  });

  it('is skipped when the team answered in time', async () => {
    const { slug } = await throughPage('Answered', nudge);
    expect((await new Visitor(h, HOST).reply(slug, { text: 'A question' })).status).toBe(303);
    await until(slug, (c) => c.workflow.steps[0].due_at !== null);
    const sam = await signIn(site, HOST, 'sam@flow.example');
    expect((await sam.reply(slug, { text: 'An answer' })).status).toBe(303);
    await fastForward(slug, 0);
    const c = await until(slug, (c) => c.workflow.steps[0].state === 'skipped');
    expect(c.workflow.steps[0]).toMatchObject({ error: NO_REPLY_ANSWERED, runs: 0 });
  });

  it('repeats as often as it was told, then ends', async () => {
    const { slug } = await throughPage('Daily', [
      { trigger: { type: 'repeat', every: 'day', times: 2 }, action: { type: 'add_tags', tags: ['daily'] } },
    ]);
    const first = await conversation(slug);
    expect(Date.parse(first.workflow.steps[0].due_at) - Date.now()).toBeGreaterThan(86_000_000);
    await until(slug, async () => (await jobs(slug)).length === 1);
    await fastForward(slug, 0);
    await until(slug, (c) => c.workflow.steps[0].runs === 1 && c.workflow.steps[0].state === 'pending');
    await fastForward(slug, 0);
    const done = await until(slug, (c) => c.workflow.steps[0].state === 'done');
    expect(done.workflow.steps[0]).toMatchObject({ runs: 2, due_at: null });
    expect((await jobs(slug)).map((j) => [j.occurrence, j.state])).toEqual([
      ['run:1', 'done'],
      ['run:2', 'done'],
    ]);
  });
});

describe('durable work', () => {
  it('runs a step that fell due while no worker ran, once, when one comes back', async () => {
    await worker.stop();
    const { slug } = await throughPage('Restart', [
      {
        trigger: { type: 'conversation.created', delay_seconds: 600 },
        action: { type: 'post_message', as: 'sam@flow.example', text: 'Ten minutes later' },
      },
    ]);
    // The worker is down; the event waits, then the step's time passes.
    const store = new PgWorkflowJobs(h.db.orm.em.fork());
    await store.expandEvents(100, planSteps);
    await fastForward(slug, 0);
    // A new process's worker, on the same database.
    worker = startWorkflowWorker(new PgWorkflowJobs(h.db.orm.em.fork()), {
      logger: createLogger('silent'),
      intervalMs: 50,
    });
    const c = await until(slug, (c) => c.workflow.steps[0].state === 'done');
    await new Promise((r) => setTimeout(r, 300));
    expect((await conversation(slug)).messages.map((m: { text: string }) => m.text)).toEqual(['Ten minutes later']);
    expect(c.workflow.steps[0].runs).toBe(1);
  });

  it('lets two replicas race for 40 due steps and runs each once', async () => {
    await worker.stop();
    const slugs: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { slug } = await throughPage(`Race ${i}`, [
        {
          trigger: { type: 'conversation.created' },
          action: { type: 'post_message', as: 'sam@flow.example', text: `Once ${i}` },
        },
      ]);
      slugs.push(slug);
    }
    const replicas = [0, 1].map(() => new PgWorkflowJobs(h.db.orm.em.fork()));
    const drain = async (store: PgWorkflowJobs) => {
      while (await advanceWorkflows(store, 5)) {
        // Small batches, so the two replicas interleave.
      }
    };
    try {
      // A step made this instant may be due a hair after the round's transaction began: a later round takes it.
      for (let round = 0; round < 3; round++) {
        await Promise.all(replicas.map(drain));
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      worker = startWorkflowWorker(h.services.workflowJobs, { logger: createLogger('silent'), intervalMs: 50 });
    }
    const [posted] = await sql<{ n: number; distinct_jobs: number }>(
      `select count(*)::int as n, count(distinct workflow_job_id)::int as distinct_jobs from message
       where conversation_id in (select id from conversation where slug in (select jsonb_array_elements_text(?::jsonb)))`,
      [JSON.stringify(slugs)],
    );
    expect(posted).toEqual({ n: 40, distinct_jobs: 40 });
  });

  it('retries a step that cannot be done, then shows it failed with why', async () => {
    const { slug } = await throughPage('Failing', [
      {
        trigger: { type: 'conversation.created', delay_seconds: 3600 },
        action: { type: 'post_message', as: 'sam@flow.example', text: 'Never posted' },
      },
    ]);
    // Sam leaves the team before the step's time.
    await sql(`update account_user set team_role = null where email = 'sam@flow.example'`);
    try {
      await until(slug, async () => (await jobs(slug)).length === 1);
      for (let attempt = 1; attempt <= WORKFLOW_RETRY_SECONDS.length + 1; attempt++) {
        await fastForward(slug, 0);
        await until(slug, async () => (await jobs(slug))[0]?.attempts === attempt);
      }
      const c = await until(slug, (c) => c.workflow.steps[0].state === 'failed');
      expect(c.workflow.steps[0]).toMatchObject({ error: "sam@flow.example is not on the account's team", runs: 0 });
      expect(c.messages).toEqual([]);
      expect((await jobs(slug))[0]).toMatchObject({ state: 'failed', attempts: WORKFLOW_RETRY_SECONDS.length + 1 });
    } finally {
      await sql(`update account_user set team_role = 'member' where email = 'sam@flow.example'`);
    }
  });
});
