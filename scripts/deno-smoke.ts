/**
 * Deno smoke test: an account made by the (Node) CLI, the server started with `deno run`, and
 * create, get and list called over real HTTP, and a conversation page opened. Uses a throwaway PGlite directory unless
 * DATABASE_URL names a PostgreSQL server. Exits non-zero on any mismatch.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'convo-deno-'));
const port = 3900 + Math.floor(Math.random() * 90);
const key = `deno${Date.now().toString(36)}`;
const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };

function check(what: string, ok: boolean, detail: unknown): void {
  if (!ok) throw new Error(`${what}: ${JSON.stringify(detail)}`);
  console.log(`ok - ${what}`);
}

const account = JSON.parse(
  execFileSync(
    process.execPath,
    [
      join(root, 'apps/api/src/cli/main.ts'),
      'account',
      'create',
      '--key',
      key,
      '--name',
      'Deno smoke',
      '--host',
      // The account's own site is this server, so its conversation pages open here.
      `http://127.0.0.1:${port}`,
      '--owner-email',
      'o@deno.example.com',
      '--owner-name',
      'Owner',
      '--json',
    ],
    { env, encoding: 'utf8' },
  ),
);
const auth = { authorization: `Bearer ${account.token.token}` };

// The V8 options `npm run start:deno` gives the server (package.json), so that they are tried here.
const startDeno: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['start:deno'];
const denoOptions = startDeno.split(/\s+/).filter((word) => word.startsWith('--v8-flags='));
const server = spawn(
  join(root, 'node_modules/.bin/deno'),
  ['run', ...denoOptions, '--allow-all', join(root, 'apps/api/src/entry/deno.ts')],
  {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
const base = `http://127.0.0.1:${port}/api/v1/conversations`;

try {
  // Deno's first start in a fresh clone compiles the whole graph: on a machine busy with other
  // work that has taken over a minute, so the wait is generous and the failure says which it was.
  const started = Date.now();
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (server.exitCode !== null) throw new Error(`the Deno server exited with code ${server.exitCode}`);
    if (Date.now() - started > 180_000) throw new Error('the Deno server did not answer /healthz within 180 s');
    await new Promise((r) => setTimeout(r, 300));
  }
  console.log(`# the Deno server answered after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const created = await fetch(`${base}/create_conversation`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Hello from Deno', slug: 'deno-smoke', allow_anonymous_messages: true }),
  });
  const body: any = await created.json();
  check('create answers 201 with the slug', created.status === 201 && body.slug === 'deno-smoke', body);
  const got = await fetch(`${base}/get_conversation?slug=DENO-SMOKE`, { headers: auth });
  const one: any = await got.json();
  check(
    'get finds it ignoring case',
    got.status === 200 && one.id === body.id && 'conversation_credated_time_nice' in one,
    one,
  );
  const listed = await fetch(`${base}/get_conversations?page=1`, { headers: auth });
  const page: any = await listed.json();
  check('list holds it', listed.status === 200 && page.conversations.length === 1, page);
  const denied = await fetch(`${base}/get_conversations`);
  check(
    'no token is 401 with the error body',
    denied.status === 401 && typeof ((await denied.json()) as { error?: unknown }).error === 'string',
    denied.status,
  );
  // The body limits hold on Deno too: they live in the fetch handler, not in a runtime's server.
  const chunk = new Uint8Array(16 * 1024).fill(32);
  let sent = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      sent += chunk.byteLength;
      if (sent > 4 * 1024 * 1024) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const oversized = await fetch(`http://127.0.0.1:${port}/trpc/conversations.createConversation`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: endless,
    duplex: 'half',
  } as RequestInit);
  const refusal: any = await oversized.json();
  check(
    'a chunked tRPC body over the limit is 413, cut off',
    oversized.status === 413 && refusal.error?.data?.appCode === 'body_too_large',
    refusal,
  );
  const batch = await fetch(
    `http://127.0.0.1:${port}/trpc/${Array(11).fill('conversations.getConversations').join(',')}?batch=1&input=%7B%7D`,
    { headers: auth },
  );
  check('a tRPC batch over the cap is 400', batch.status === 400, batch.status);
  const shown = await fetch(body.conversation_url);
  const html = await shown.text();
  check(
    'the conversation_url opens its page',
    shown.status === 200 && html.includes('<h1>Hello from Deno</h1>') && !!shown.headers.get('content-security-policy'),
    { status: shown.status, html: html.slice(0, 200) },
  );
  // Live: the page's event stream (PGlite's listen, a streamed answer on Deno) tells of a reply.
  const stream = await fetch(`http://127.0.0.1:${port}/c/deno-smoke/events`);
  const reader = (stream.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
  let heard = '';
  const hear = async (what: RegExp) => {
    const deadline = Date.now() + 10_000;
    while (!what.test(heard) && Date.now() < deadline) {
      const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 500))]);
      if (next && !next.done) heard += next.value;
    }
    return what.test(heard);
  };
  await hear(/retry: \d+/);
  const form = await fetch(body.conversation_url);
  const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const replied = await fetch(body.conversation_url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      origin: `http://127.0.0.1:${port}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ csrf, text: 'Live from Deno' }).toString(),
  });
  const id = /#message-(\d+)$/.exec(replied.headers.get('location') ?? '')?.[1];
  check(
    'the page’s live stream tells of a reply posted meanwhile',
    stream.headers.get('content-type') === 'text/event-stream; charset=utf-8' &&
      replied.status === 303 &&
      (await hear(new RegExp(`event: posted\ndata: \\{"message_id":${id}\\}`))),
    { status: replied.status, heard },
  );
  await reader.cancel();
  // A second server on the same port (its own data directory) says which port is taken and exits 1.
  const secondDir = mkdtempSync(join(tmpdir(), 'convo-deno-second-'));
  try {
    const second = spawn(
      join(root, 'node_modules/.bin/deno'),
      ['run', ...denoOptions, '--allow-all', join(root, 'apps/api/src/entry/deno.ts')],
      { env: { ...env, DATA_DIR: secondDir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let said = '';
    second.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      said += chunk;
    });
    second.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      said += chunk;
    });
    const code = await new Promise((r) => second.once('exit', r));
    check(
      'a second server on a taken port logs which and exits 1, without a stack trace',
      code === 1 &&
        said.includes(`cannot listen on 127.0.0.1:${port}: another process is listening there`) &&
        !/^\s+at /m.test(said),
      { code, said },
    );
  } finally {
    rmSync(secondDir, { recursive: true, force: true });
  }
  console.log('deno-smoke: 9 passed, 0 failed');
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
