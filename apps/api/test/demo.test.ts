import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from './support/server-process.ts';

/*
 * `npm run demo` as a newcomer runs it: on a fresh embedded database, every URL it prints, and
 * every URL the API then hands out, opens. The demo always uses the embedded database, so the
 * runs against a PostgreSQL server (DATABASE_URL set) leave it to the embedded run.
 */
const embeddedRun = !process.env.DATABASE_URL;

const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname;

let dataDir: string;
let demo: ChildProcess;
let output = '';
let mediaDir: string;

beforeAll(async () => {
  if (!embeddedRun) return;
  dataDir = await mkdtemp(join(tmpdir(), 'convo-demo-'));
  mediaDir = await mkdtemp(join(tmpdir(), 'convo-demo-media-'));
  // What an earlier demo left: --reset starts from nothing.
  await writeFile(join(dataDir, 'left-by-an-earlier-demo'), '');
  await writeFile(join(mediaDir, 'left-by-an-earlier-demo'), '');
  const port = await freePort();
  demo = spawn(process.execPath, [CLI, 'demo', '--reset'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      MEDIA_DIR: mediaDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  demo.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const deadline = Date.now() + 120_000;
  while (!output.includes('Stop with Ctrl-C')) {
    if (Date.now() > deadline || demo.exitCode !== null) throw new Error(`the demo did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 150_000);

afterAll(async () => {
  if (demo && demo.exitCode === null) {
    const exited = new Promise((r) => demo.once('exit', r));
    demo.kill('SIGTERM');
    const late = setTimeout(() => demo.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(late);
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
}, 30_000);

it.skipIf(!embeddedRun)(
  'prints a page URL that opens, and the URLs the API returns open on the same server',
  async () => {
    const origin = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    const token = /API token \(new on every start\): (\S+)/.exec(output)?.[1];
    const pageUrl = /Open a conversation page in a browser: (\S+)/.exec(output)?.[1];
    expect(pageUrl).toBe(`${origin}/c/welcome`);
    const page = await fetch(pageUrl ?? '');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Welcome to the demo</h1>');

    const created = await fetch(`${origin}/api/v1/conversations/create_conversation`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Opened from the demo' }),
    });
    const body = (await created.json()) as { conversation_url: string; conversation_embed_url: string };
    expect(body.conversation_url.startsWith(`${origin}/c/`)).toBe(true);
    for (const url of [body.conversation_url, body.conversation_embed_url]) {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(await res.text(), url).toContain('Opened from the demo');
    }
  },
  60_000,
);

it.skipIf(!embeddedRun)('starts from nothing with --reset: the earlier database and recordings are gone', async () => {
  await expect(stat(join(dataDir, 'left-by-an-earlier-demo'))).rejects.toThrow();
  await expect(stat(join(mediaDir, 'left-by-an-earlier-demo'))).rejects.toThrow();
  expect(output).toContain('demo account "demo"');
});

it.skipIf(!embeddedRun)(
  'prints each mail it would send as a block with its link, and lists it at /_demo/mail',
  async () => {
    const origin = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
    expect(output).toContain(`each mail (sign-in links) is printed here and listed at ${origin}/_demo/mail`);
    const empty = await fetch(`${origin}/_demo/mail`);
    expect(empty.status).toBe(200);
    expect(await empty.text()).toContain('No mail yet');
    // Ask for a sign-in link, as a person does on the sign-in page.
    const form = await fetch(`${origin}/sign-in`);
    const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const asked = await fetch(`${origin}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, email: 'owner@demo.example.com' }),
    });
    expect(asked.status).toBeLessThan(400);
    const printed = async () => {
      while (!output.includes('Mail to owner@demo.example.com')) await new Promise((r) => setTimeout(r, 50));
      return output.slice(output.indexOf('Mail to owner@demo.example.com'));
    };
    const block = await printed();
    expect(block).toContain(`(not sent: no SMTP_URL; also at ${origin}/_demo/mail)`);
    const link = new RegExp(`^(${origin}/sign-in/\\S+)$`, 'm').exec(block)?.[1];
    expect(link).toBeDefined();
    const listed = await (await fetch(`${origin}/_demo/mail`)).text();
    expect(listed).toContain(`<a href="${link}">`);
    expect(listed).toContain('To owner@demo.example.com');
  },
  60_000,
);

it.skipIf(!embeddedRun)(
  'lets a webhook be tried on this machine, as it says when it starts',
  async () => {
    expect(output).toContain('Webhooks may go to http:// receivers on this machine here');
    const origin = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    const token = /API token \(new on every start\): (\S+)/.exec(output)?.[1];
    const received: string[] = [];
    const receiver = createHttpServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        received.push(body);
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const api = (path: string, body: unknown) =>
        fetch(`${origin}/api/v1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const subscribed = await api('/webhooks', { url: hook, events: ['conversation_created'] });
      expect(subscribed.status).toBe(201);
      expect((await api('/conversations/create_conversation', { title: 'Hooked' })).status).toBe(201);
      const deadline = Date.now() + 20_000;
      while (!received.some((body) => body.includes('Hooked')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(received.join('\n')).toContain('"title":"Hooked"');
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  },
  60_000,
);

it.skipIf(!embeddedRun)(
  'says which port is taken, without a stack trace, when a second server is started on it',
  async () => {
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1] ?? '';
    const secondDir = await mkdtemp(join(tmpdir(), 'convo-demo-second-'));
    try {
      const second = spawn(process.execPath, [CLI, 'demo'], {
        env: {
          ...process.env,
          DATABASE_URL: '',
          DATA_DIR: secondDir,
          PORT: port,
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let said = '';
      second.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        said += chunk;
      });
      second.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        said += chunk;
      });
      const code = await new Promise((r) => second.once('exit', r));
      expect(code).toBe(1);
      expect(said).toContain(`cannot listen on 127.0.0.1:${port}: another process is listening there`);
      expect(said).not.toMatch(/^\s+at /m);
    } finally {
      await rm(secondDir, { recursive: true, force: true });
    }
  },
  120_000,
);
