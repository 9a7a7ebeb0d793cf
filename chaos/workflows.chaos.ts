import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request, sleep, startLoad } from './support/load.ts';
import { startThrowawayPostgres, type ThrowawayPostgres } from './support/postgres.ts';
import { cli, createAccount, type ServerProcess, startServer } from './support/server.ts';

/*
 * A workflow-heavy run: two server processes create conversations through an intake page whose
 * workflow posts a welcome message, tags, and posts again two seconds later, while PostgreSQL is
 * stopped for 4 s in the middle. Once the work has drained, every conversation (acknowledged or
 * not: a create may commit and lose its answer) has each step run exactly once.
 */

let db: ThrowawayPostgres;
let token: string;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  db = await startThrowawayPostgres();
  token = createAccount(db.url, 'flows').token;
  cli(db.url, [
    'user',
    'add',
    '--account',
    'flows',
    '--email',
    'sam@flows.example',
    '--name',
    'Sam',
    '--team',
    'member',
  ]);
  for (let i = 0; i < 2; i++) servers.push(await startServer(db.url, { RATE_LIMIT: '600000' }));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  db?.destroy();
});

const STEPS = [
  {
    trigger: { type: 'conversation.created' },
    action: { type: 'post_message', as: 'sam@flows.example', text: 'Welcome' },
  },
  { trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['new'] } },
  {
    trigger: { type: 'conversation.created', delay_seconds: 2 },
    action: { type: 'post_message', as: 'sam@flows.example', text: 'Two seconds later' },
  },
];

it('loses no step and runs none twice through a database outage, on two replicas', async () => {
  const api = (server: ServerProcess, path: string, body: unknown) =>
    fetch(`${server.baseUrl}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ id: number; workflow_id?: number }>);
  const [first] = servers as [ServerProcess];
  const workflow = await api(first, '/workflows', { name: 'Welcome', steps: STEPS });
  const page = await api(first, '/intake_pages', { name: 'Contact', workflow_id: workflow.id });
  expect(page.workflow_id).toBe(workflow.id);

  const load = startLoad(8, (w, n) =>
    request('create', `${(servers[w % 2] as ServerProcess).baseUrl}/api/v1/conversations/create_conversation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ intake_page_id: page.id, title: `w${w} #${n}` }),
    }),
  );
  await sleep(3_000);
  db.stop();
  await sleep(4_000);
  db.start();
  await sleep(3_000);
  await load.stop();

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    // Drained: no event left, and no step pending that is due (the delayed ones fall due within 2 s).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await client.query<{ waiting: number }>(
        `select (select count(*) from workflow_event)::int + (select count(*) from workflow_job where state = 'pending')::int as waiting`,
      );
      if (rows[0]?.waiting === 0) break;
      if (Date.now() > deadline) throw new Error(`still ${rows[0]?.waiting} workflow rows waiting`);
      await sleep(250);
    }
    const acknowledged = load.outcomes.filter((o) => o.status === 201).map((o) => o.body.id as number);
    const { rows } = await client.query<{ id: number; welcome: number; later: number; tags: number; states: string }>(
      `select c.id,
         (select count(*)::int from message m where m.conversation_id = c.id and m.text = 'Welcome') as welcome,
         (select count(*)::int from message m where m.conversation_id = c.id and m.text = 'Two seconds later') as later,
         (select count(*)::int from conversation_tag t where t.conversation_id = c.id) as tags,
         (select string_agg(s->>'state', ',' order by i) from jsonb_array_elements(c.workflow->'steps') with ordinality as x(s, i)) as states
       from conversation c`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const wrong = rows.filter((r) => r.welcome !== 1 || r.later !== 1 || r.tags !== 1 || r.states !== 'done,done,done');
    const missing = acknowledged.filter((id) => !byId.has(id));
    console.log(
      `workflows: ${acknowledged.length} creates acknowledged, ${rows.length} conversations stored, ` +
        `${rows.length * STEPS.length} steps expected; wrong: ${wrong.length}, missing: ${missing.length}`,
    );
    expect(acknowledged.length).toBeGreaterThan(20);
    expect(missing).toEqual([]);
    expect(wrong.slice(0, 5)).toEqual([]);
    for (const s of servers) expect(s.child.exitCode, s.output()).toBeNull();
  } finally {
    await client.end();
  }
}, 120_000);
