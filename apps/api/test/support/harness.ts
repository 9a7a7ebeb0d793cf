import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, createIntakePage, createWorkflow, issueToken, revokeToken } from '@convo/db';
import { openTestDatabase, type TestDatabase } from '@convo/db/testing';
import { type App, createApp } from '../../src/http/app.ts';
import type { Services } from '../../src/http/services.ts';
import { type AppSettings, type SettingChanges, withChanges } from '../../src/http/settings.ts';
import { createLogger } from '../../src/logger.ts';
import { diskMedia } from '../../src/media/backend.ts';
import { createServices, DEFAULT_SERVICE_OPTIONS, type ServiceOptions } from '../../src/start/services.ts';

export const BASE = 'http://api.test';
export const REST = `${BASE}/api/v1/conversations`;
export const MAX_BODY_BYTES = 64 * 1024;
export const METRICS_TOKEN = 'metrics-token-for-tests';

/**
 * Tests read pages far faster than people do, and count statements: the per-address read limit
 * (which claims its quota in blocks, a statement now and then) is off unless a test turns it on;
 * so are the account's hourly budget of mail to unconfirmed addresses, which suites pass by far,
 * and the cap on recordings sent at once (tests leave many answers unread).
 */
const UNLIMITED_BY_DEFAULT = {
  readsPerIpPerMinute: 0,
  unconfirmedMailPerAccountPerHour: 0,
  downloadsPerClient: 0,
  downloadsMax: 0,
};

export interface Harness {
  db: TestDatabase;
  app: App;
  services: Services;
  statements: string[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  logTo?: { write(line: string): void };
  services?: Partial<ServiceOptions>;
  /** What the test changes of the settings tests run with (`testSettings`). */
  app?: SettingChanges;
}

/**
 * The settings tests run with: the defaults, /metrics open to METRICS_TOKEN and the limits suites
 * pass by far off (UNLIMITED_BY_DEFAULT), then what the test itself changes.
 */
export const testSettings = (changes: SettingChanges = {}): AppSettings =>
  withChanges(changes, withChanges({ http: { metricsToken: METRICS_TOKEN }, site: { limits: UNLIMITED_BY_DEFAULT } }));

/**
 * Recordings in a temporary folder of each harness's own, never in the working copy's .data/media.
 * The folders share one root per test process, removed when the process exits (not when a
 * harness closes: the tus file store makes its folder asynchronously, and may still be at it).
 */
let mediaRoot: string | undefined;
const testMedia = (): Pick<ServiceOptions, 'media'> => {
  if (!mediaRoot) {
    const root = mkdtempSync(join(tmpdir(), 'convo-test-media-'));
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    mediaRoot = root;
  }
  return { media: { backend: diskMedia(mkdtempSync(join(mediaRoot, 'h-'))) } };
};

/** The real app on a real, migrated database (PGlite, or PostgreSQL when DATABASE_URL is set). */
export async function openHarness(o: HarnessOptions = {}): Promise<Harness> {
  const statements: string[] = [];
  const db = await openTestDatabase({ onQuery: (sql) => statements.push(sql) });
  const logger = o.logTo ? createLogger('info', o.logTo) : createLogger('silent');
  const services = createServices(db.orm, logger, { ...DEFAULT_SERVICE_OPTIONS, ...testMedia(), ...o.services });
  const app = createApp(services, testSettings(o.app));
  return { db, app, services, statements, close: () => db.close() };
}

/** Another process's view of the same database: its own services (rate-limit buckets and all). */
export function secondApp(h: Harness, services: Partial<ServiceOptions> = {}, app: SettingChanges = {}): App {
  return createApp(
    createServices(h.db.orm, createLogger('silent'), {
      ...DEFAULT_SERVICE_OPTIONS,
      media: h.services.media,
      ...services,
    }),
    testSettings(app),
  );
}

export interface TestAccount {
  id: number;
  key: string;
  token: string;
  ownerId: number;
  primaryPageId: number;
  secondaryPageId: number;
  workflowId: number;
}

export const MONTHLY_TAG = {
  trigger: { type: 'repeat', every: 'month', times: 1 },
  action: { type: 'add_tags', tags: ['triage'] },
} as const;

/** An account with an owner, a workflow, a primary page (with the workflow) and a secondary page. */
export async function makeAccount(h: Harness, key: string, withPrimary = true): Promise<TestAccount> {
  const em = h.db.orm.em.fork();
  const made = await createAccount(em, {
    key,
    name: `Account ${key}`,
    host: `https://${key}.example.com`,
    owner: { email: `owner@${key}.example.com`, name: `Owner ${key}` },
    defaults: { anyoneCanPost: true, allowAnonymousMessages: false, allowSearchEngines: true },
  });
  // A step due in a month: the copy shows it pending, and nothing runs while a test does.
  const workflow = await createWorkflow(em, made.id, { name: `${key} triage`, steps: [MONTHLY_TAG] });
  const primary = withPrimary
    ? await createIntakePage(em, made.id, { name: 'Main', primary: true, workflowId: workflow.id })
    : { id: 0 };
  const secondary = await createIntakePage(em, made.id, { name: 'Side', primary: false });
  return {
    id: made.id,
    key,
    token: made.token.token,
    ownerId: made.owner?.id ?? 0,
    primaryPageId: primary.id,
    secondaryPageId: secondary.id,
    workflowId: workflow.id,
  };
}

export async function newToken(h: Harness, accountId: number): Promise<{ id: number; token: string }> {
  return issueToken(h.db.orm.em.fork(), accountId, 'test');
}

export async function revoke(h: Harness, accountId: number, tokenId: number): Promise<void> {
  await revokeToken(h.db.orm.em.fork(), accountId, tokenId);
}

export interface Call {
  status: number;
  body: any;
  headers: Headers;
}

export async function call(h: Harness, req: Request): Promise<Call> {
  const res = await h.app.fetch(req);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // left as text: a test asserting JSON will say so
  }
  return { status: res.status, body, headers: res.headers };
}

export const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** Rows of a query on the harness's database, as a test checks what was written. */
export const rows = async <T>(h: Harness, text: string, params: unknown[] = []) =>
  (await h.db.orm.em.fork().getConnection().execute(text, params)) as T[];

/** Waits until `what` holds, for at most `ms` (background work: a worker's delivery, a planned step). */
export async function until(what: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A request to `/api/v1<path>` with these headers (a token's, another's, none), and a JSON body if given. */
export const apiCall = (h: Harness, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  call(
    h,
    new Request(`${BASE}/api/v1${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

/** A file as a multipart body carries it. */
export interface FilePart {
  name: string;
  type: string;
  bytes: Uint8Array;
}

/**
 * A request to `/api/v1<path>` with a multipart/form-data body: the fields, then the file as
 * `recording` (encoded first, as a client has the bytes it sends).
 */
export async function apiMultipart(
  h: Harness,
  method: string,
  path: string,
  headers: Record<string, string>,
  fields: Record<string, string>,
  file?: FilePart,
): Promise<Call> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('recording', new Blob([file.bytes], { type: file.type }), file.name);
  const encoded = new Response(form);
  return call(
    h,
    new Request(`${BASE}/api/v1${path}`, {
      method,
      headers: { ...headers, 'content-type': encoded.headers.get('content-type') ?? '' },
      body: await encoded.arrayBuffer(),
    }),
  );
}

/** A file of test/fixtures/media, as a multipart body carries it. */
export const mediaFixture = (name: string, type: string): FilePart => ({
  name,
  type,
  bytes: new Uint8Array(readFileSync(new URL(`../fixtures/media/${name}`, import.meta.url))),
});

/** How many recordings the media store keeps. */
export async function keptRecordings(h: Harness): Promise<number> {
  let n = 0;
  for await (const _ of h.services.media.store.list(new Date(Date.now() + 60_000))) n++;
  return n;
}

export const createJson = (h: Harness, token: string, body: unknown) =>
  call(
    h,
    new Request(`${REST}/create_conversation`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );

/** create_conversation with a form body (`application/x-www-form-urlencoded`), sent as written. */
export const createForm = (h: Harness, token: string, body: string) =>
  call(
    h,
    new Request(`${REST}/create_conversation`, {
      method: 'POST',
      headers: { ...auth(token), 'content-type': 'application/x-www-form-urlencoded' },
      body,
    }),
  );

export const get = (h: Harness, token: string | null, path: string) =>
  call(h, new Request(`${REST}/${path}`, { headers: token ? auth(token) : {} }));
