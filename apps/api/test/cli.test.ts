import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { openOrm } from '@convo/db';
import { openTestDatabase, type TestDatabase } from '@convo/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/program.ts';
import { createApp } from '../src/http/app.ts';
import { withChanges } from '../src/http/settings.ts';
import { createLogger } from '../src/logger.ts';
import { createServices } from '../src/start/services.ts';

/*
 * The CLI as an operator runs it, on a real database: each command line runs as `npm run cli`
 * runs it (runCli, with streams and an environment of the test's own, opening the database anew);
 * one test runs it as a process of its own.
 */

const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname;
const SEED = new URL('../../../examples/seed.json', import.meta.url).pathname;
/** A step naming one of the account's people (added by the test first). */
const STEP = {
  trigger: { type: 'message.created', by: 'participant' },
  action: { type: 'add_members', emails: ['sam@acme.example'] },
};

let env: Record<string, string>;
let dataDir: string | undefined;
let mediaDir: string;
let server: TestDatabase | undefined;

/** A stream that keeps what is written to it as text. */
const collect = (add: (text: string) => void) =>
  new Writable({
    write(chunk, _encoding, done) {
      add(String(chunk));
      done();
    },
  });

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWithInput('', ...args);
}

async function cliWithInput(input: string, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env,
    stdin: Readable.from([input]),
    stdout: collect((t) => {
      stdout += t;
    }),
    stderr: collect((t) => {
      stderr += t;
    }),
  });
  return { code, stdout, stderr };
}

const json = async (...args: string[]) => {
  const r = await cli(...args, '--json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
};

/** The database the CLI uses, opened in this process (close it when done). */
const openSameDatabase = () =>
  env.DATABASE_URL
    ? openOrm({ kind: 'postgres', url: env.DATABASE_URL, namedStatements: process.env.DB_NAMED_STATEMENTS !== 'false' })
    : openOrm({ kind: 'pglite', dataDir: env.DATA_DIR as string });

/** Opens the same database in this process and asks the API something with `token`. */
async function apiStatus(token: string, path = 'get_conversation'): Promise<number> {
  const orm = await openSameDatabase();
  try {
    const app = createApp(createServices(orm, createLogger('silent')), withChanges());
    const res = await app.fetch(
      new Request(`http://cli.test/api/v1/conversations/${path}`, { headers: { authorization: token } }),
    );
    return res.status;
  } finally {
    await orm.close();
  }
}

beforeAll(async () => {
  mediaDir = await mkdtemp(join(tmpdir(), 'convo-cli-media-'));
  env = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error', MEDIA_DIR: mediaDir };
  if (process.env.DB_NAMED_STATEMENTS) env.DB_NAMED_STATEMENTS = process.env.DB_NAMED_STATEMENTS;
  if (process.env.DATABASE_URL) {
    server = await openTestDatabase();
    env.DATABASE_URL = server.url as string;
  } else {
    dataDir = await mkdtemp(join(tmpdir(), 'convo-cli-'));
    env.DATA_DIR = dataDir;
  }
});

afterAll(async () => {
  await server?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  await rm(mediaDir, { recursive: true, force: true });
});

interface RecordedRow {
  id: number;
  message_type: string;
  recorded_duration_seconds: number;
  media_key: string | null;
  media_content_type: string | null;
}

/** The messages of an account's conversation `slug` with their recordings' keys, read in this process. */
/** Rows of a statement, on a connection of its own (the CLI's processes hold the database between). */
async function pgQuery(text: string, params: unknown[] = []): Promise<unknown[]> {
  const orm = await openSameDatabase();
  try {
    return await orm.em.getConnection().execute(text, params);
  } finally {
    await orm.close();
  }
}

async function recordedMessages(account: string, slug: string): Promise<RecordedRow[]> {
  const orm = await openSameDatabase();
  try {
    const rows: RecordedRow[] = await orm.em.getConnection().execute(
      `select m.id, m.message_type, m.recorded_duration_seconds, m.media_key, m.media_content_type
       from message m join conversation c on c.id = m.conversation_id join account a on a.id = c.account_id
       where a.key = ? and c.slug = ? order by m.id`,
      [account, slug],
    );
    return rows;
  } finally {
    await orm.close();
  }
}

// Each step opens the database anew, as the CLI does.
describe('operator CLI', { timeout: 60_000 }, () => {
  let token: string;

  it('creates an account and prints its first token once', async () => {
    const made = await json(
      'account',
      'create',
      '--key',
      'acme',
      '--name',
      'Acme',
      '--host',
      'acme.example.com',
      '--owner-email',
      'o@acme.example',
      '--owner-name',
      'Olive',
      '--private',
    );
    expect(made).toMatchObject({ key: 'acme', host: 'https://acme.example.com', owner: { email: 'o@acme.example' } });
    token = made.token.token;
    expect(token).toMatch(/^cnv_/);
    expect(await apiStatus(token)).toBe(404); // authenticated; the account simply has no conversations yet
  });

  it('sets an account rate limit and returns it to the server default', async () => {
    expect(await json('account', 'rate-limit', '--key', 'acme', '--limit', '600')).toEqual({
      key: 'acme',
      rateLimit: 600,
    });
    expect(await json('account', 'rate-limit', '--key', 'acme', '--limit', 'default')).toEqual({
      key: 'acme',
      rateLimit: null,
    });
    const refused = await cli('account', 'rate-limit', '--key', 'acme', '--limit', 'lots');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--limit/);
  });

  it('adds users, workflows and intake pages', async () => {
    expect(
      await json('user', 'add', '--account', 'acme', '--email', 'sam@acme.example', '--name', 'Sam'),
    ).toMatchObject({
      email: 'sam@acme.example',
    });
    const wf = await json(
      'workflow',
      'create',
      '--account',
      'acme',
      '--name',
      'Triage',
      '--steps',
      JSON.stringify([STEP]),
    );
    expect(wf).toMatchObject({ name: 'Triage', steps: [STEP], disabled: false });
    // A step the server cannot run, or one naming somebody who is not the account's, is refused.
    const unknown = await cli(
      'workflow',
      'create',
      '--account',
      'acme',
      '--name',
      'x',
      '--steps',
      '[{"assign":"sam"}]',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/steps/);
    const stranger = await cli(
      'workflow',
      'create',
      '--account',
      'acme',
      '--name',
      'x',
      '--steps',
      JSON.stringify([{ ...STEP, action: { type: 'add_members', emails: ['nobody@elsewhere.example'] } }]),
    );
    expect(stranger.stderr).toMatch(/nobody@elsewhere\.example is not one of the account's people/);
    const disabled = await json('workflow', 'change', '--account', 'acme', '--id', String(wf.id), '--disable');
    expect(disabled).toMatchObject({ id: wf.id, disabled: true });
    expect(await json('workflow', 'list', '--account', 'acme')).toMatchObject([{ id: wf.id, disabled: true }]);
    await json('workflow', 'change', '--account', 'acme', '--id', String(wf.id), '--enable');
    const page = await json(
      'intake-page',
      'create',
      '--account',
      'acme',
      '--name',
      'Main',
      '--primary',
      '--workflow',
      String(wf.id),
    );
    // The API's shape, and only it (no second spelling of a member).
    expect(page).toMatchObject({ primary: true, workflow_id: wf.id });
    expect(page).not.toHaveProperty('workflowId');
    // One primary page: making another primary makes the last not.
    const second = await json('intake-page', 'create', '--account', 'acme', '--name', 'Also main', '--primary');
    expect(second).toMatchObject({ key: 'also-main', primary: true });
    const listed = await json('intake-page', 'list', '--account', 'acme');
    expect(listed.filter((p: { primary: boolean }) => p.primary).map((p: { id: number }) => p.id)).toEqual([second.id]);
    const closed = await json('intake-page', 'change', '--account', 'acme', '--id', String(page.id), '--disable');
    expect(closed).toMatchObject({ id: page.id, disabled: true });
  });

  it("puts users on the account's team and takes them off; the owner stays an owner", async () => {
    expect(
      await json('user', 'add', '--account', 'acme', '--email', 'ana@acme.example', '--name', 'Ana', '--team', 'admin'),
    ).toMatchObject({ email: 'ana@acme.example', team: 'admin' });
    expect(
      await json('user', 'team', '--account', 'acme', '--email', 'SAM@acme.example', '--role', 'member'),
    ).toMatchObject({ email: 'sam@acme.example', role: 'member', changed: true, mailed: true });
    expect(
      await json('user', 'team', '--account', 'acme', '--email', 'sam@acme.example', '--role', 'none'),
    ).toMatchObject({ role: null, mailed: false });
    const owner = await cli('user', 'team', '--account', 'acme', '--email', 'o@acme.example', '--role', 'admin');
    expect(owner.code).toBe(1);
    expect(owner.stderr).toMatch(/owns the account/);
    const unknownRole = await cli('user', 'team', '--account', 'acme', '--email', 'sam@acme.example', '--role', 'boss');
    expect(unknownRole.code).not.toBe(0);
    expect(unknownRole.stderr).toMatch(/owner, admin, member, none/);
    // An address nobody has is invited: a new user on the team, mailed where to sign in (as the page does).
    const invited = await cli('user', 'team', '--account', 'acme', '--email', 'x_y@acme.example', '--role', 'admin');
    expect(invited.stderr).toBe('');
    expect(invited.code).toBe(0);
    expect(invited.stdout).toMatch(/x_y@acme.example is on the team as admin \(mailed where to sign in\)/);
    const nobody = await cli('user', 'team', '--account', 'acme', '--email', 'z@acme.example', '--role', 'none');
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/nobody with that e-mail address is on the team/);
  });

  it('keeps message templates by the API’s rules', async () => {
    const made = await json(
      'template',
      'create',
      '--account',
      'acme',
      '--name',
      'Thanks',
      '--text',
      'Thanks <b>a lot</b>!',
    );
    expect(made).toMatchObject({ name: 'Thanks', text: 'Thanks <b>a lot</b>!', recording: null });
    const taken = await cli('template', 'create', '--account', 'acme', '--name', 'THANKS', '--text', 'Again');
    expect([taken.code, taken.stderr]).toEqual([
      1,
      'error: name is already used by another message template of this account\n',
    ]);
    const empty = await cli('template', 'create', '--account', 'acme', '--name', 'Empty');
    expect(empty.stderr).toMatch(/a template without a recording needs a text/);
    expect(await json('template', 'list', '--account', 'acme')).toMatchObject([{ id: made.id, name: 'Thanks' }]);
    const listed = await cli('template', 'list', '--account', 'acme');
    expect(listed.stdout).toBe(`${made.id}\tThanks\n`);
    // A recording file of this machine, measured as an upload is.
    const video = new URL('./fixtures/media/video-3s.webm', import.meta.url).pathname;
    const tour = await json('template', 'create', '--account', 'acme', '--name', 'Tour', '--file', video, '--screen');
    expect(tour.recording).toEqual({ message_type: 'screen', recorded_duration_seconds: 3 });
    const notVideo = await cli('template', 'create', '--account', 'acme', '--name', 'Readme', '--file', SEED);
    expect([notVideo.code, notVideo.stderr]).toEqual([
      1,
      expect.stringContaining('recording: That file is not a recording'),
    ]);
    const missing = await cli(
      'template',
      'create',
      '--account',
      'acme',
      '--name',
      'Gone',
      '--file',
      '/nonexistent.webm',
    );
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('ENOENT')]);
  });

  it('issues, lists and revokes tokens; a revoked token stops working', async () => {
    const issued = await json('token', 'create', '--account', 'acme', '--name', 'zapier');
    expect(await apiStatus(issued.token)).toBe(404);
    const listed = await json('token', 'list', '--account', 'acme');
    expect(listed.map((t: { name: string }) => t.name)).toEqual(['default', 'zapier']);
    expect(JSON.stringify(listed)).not.toContain(issued.token);
    await json('token', 'revoke', '--account', 'acme', '--id', String(issued.id));
    expect(await apiStatus(issued.token)).toBe(401);
    expect(await apiStatus(token)).toBe(404);
  });

  it('loads the example seed file and reports what it loaded', async () => {
    const loaded = await json('seed', SEED);
    expect(loaded.counts).toEqual({ accounts: 1, users: 2, conversations: 3, messages: 4, tags: 3 });
    const demoToken = loaded.accounts[0].tokens[0].token;
    expect(await apiStatus(demoToken, 'get_conversation?slug=welcome')).toBe(200);
  });

  it("adds people to a seeded conversation's members and takes them out", async () => {
    const add = ['member', 'add', '--account', 'demo', '--slug', 'welcome', '--email', 'newbie@example.org'];
    expect(await json(...add, '--name', 'Newbie')).toMatchObject({ slug: 'welcome', changed: true });
    expect(await json(...add)).toMatchObject({ changed: false });
    const remove = ['member', 'remove', '--account', 'demo', '--slug', 'welcome', '--email', 'newbie@example.org'];
    expect(await json(...remove)).toMatchObject({ changed: true });
    expect(await json(...remove)).toMatchObject({ changed: false });
    const nameless = await cli('member', 'add', '--account', 'demo', '--slug', 'welcome', '--email', 'new@example.org');
    expect(nameless.code).toBe(1);
    expect(nameless.stderr).toMatch(/give their name/);
    const noSuch = await cli('member', 'add', '--account', 'demo', '--slug', 'nope', '--email', 'newbie@example.org');
    expect(noSuch.code).toBe(1);
    expect(noSuch.stderr).toMatch(/no conversation with that slug/);
  });

  it('streams large seed files, and holds an account’s conversations only when they come first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-seed-'));
    try {
      const many = Array.from({ length: 4_500 }, (_, i) => ({
        title: `Bulk ${i}`,
        messages: [{ author: null, text: 'x' }],
      }));
      const streamed = join(dir, 'streamed.json');
      await writeFile(
        streamed,
        JSON.stringify({ accounts: [{ key: 'bulk', name: 'Bulk', host: 'bulk.example.com', conversations: many }] }),
      );
      const loaded = await json('seed', streamed);
      expect(loaded.counts).toMatchObject({ accounts: 1, conversations: 4_500, messages: 4_500 });

      // Conversations before the account's key: still loaded (held in memory for that account).
      const early = join(dir, 'early.json');
      await writeFile(
        early,
        '{"accounts":[{"conversations":[{"title":"First"}],"name":"Early","host":"early.example.com","key":"early"}]}',
      );
      expect((await json('seed', early)).counts).toMatchObject({ accounts: 1, conversations: 1 });

      // A bad conversation in a later batch: nothing of the file stays.
      const bad = join(dir, 'bad.json');
      const withBad = [...many.slice(0, 2_500), { title: 'Bad', slug: 'not a slug' }];
      await writeFile(
        bad,
        JSON.stringify({ accounts: [{ key: 'partial', name: 'P', host: 'p.example.com', conversations: withBad }] }),
      );
      const refused = await cli('seed', bad);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/conversation 2501: .*slug/);
      expect((await cli('token', 'list', '--account', 'partial')).stderr).toMatch(/no account with key "partial"/);

      const broken = join(dir, 'broken.json');
      await writeFile(
        broken,
        '{"accounts":[{"key":"broken","name":"B","host":"b.example.com","conversations":[{"title":',
      );
      const r = await cli('seed', broken);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/broken\.json (is not valid JSON|ends before its JSON does)/);
      expect((await cli('seed', join(dir, 'absent.json'))).stderr).toMatch(/cannot read .*ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exports accounts to a file or standard output, leaving the secrets behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-export-'));
    try {
      const file = join(dir, 'demo.json');
      const report = await json('export', '--account', 'demo', '--out', file);
      expect(report).toMatchObject({ conversations: 3, messages: 4, out: file });
      const exported = JSON.parse(await readFile(file, 'utf8'));
      expect(exported.accounts.map((a: { key: string }) => a.key)).toEqual(['demo']);
      expect(exported.accounts[0].conversations.map((c: { slug: string }) => c.slug)).toContain('welcome');
      expect(JSON.stringify(exported)).not.toMatch(/cnv_|whsec_/);

      const all = await cli('export', '--all');
      expect(all.code).toBe(0);
      expect(JSON.parse(all.stdout).accounts.map((a: { key: string }) => a.key)).toEqual(
        expect.arrayContaining(['acme', 'demo', 'bulk']),
      );
      expect(all.stderr).toMatch(/^exported \d+ conversations/m);

      expect((await cli('export', '--out', file)).stderr).toMatch(/give --account <key> or --all/);
      const missing = await cli('export', '--account', 'nobody', '--out', join(dir, 'nobody.json'));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/no account with key "nobody"/);
      await expect(stat(join(dir, 'nobody.json.partial'))).rejects.toThrow();
      await expect(stat(join(dir, 'nobody.json'))).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exports recordings beside the JSON, and seed loads them back byte for byte, measured again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-export-media-'));
    const fixture = new URL('./fixtures/media/video-3s.webm', import.meta.url).pathname;
    const audio = new URL('./fixtures/media/audio-3s.ogg', import.meta.url).pathname;
    try {
      const seed = join(dir, 'recs-seed.json');
      await writeFile(
        seed,
        JSON.stringify({
          accounts: [
            {
              key: 'recs',
              name: 'Recs',
              host: 'recs.example.com',
              users: [{ email: 'rae@recs.example', name: 'Rae', team: 'admin' }],
              message_templates: [
                { name: 'Voice hello', creator: 'rae@recs.example', media_file: audio, type: 'audio' },
                { name: 'Thanks', text: '<p>Thanks <b>a lot</b><script>x()</script></p>', format: 'html' },
              ],
              conversations: [
                {
                  slug: 'with-media',
                  messages: [
                    {
                      text: 'Look',
                      media_file: fixture,
                      type: 'screen',
                      template: 'Gone template',
                      transcript: { language: 'en', segments: [{ start: 0.5, end: 2, text: 'Look at the chart' }] },
                    },
                    // The seed says video; the bytes are audio only: audio it is.
                    { text: '', media_file: audio, type: 'video' },
                    {
                      text: 'Elsewhere',
                      type: 'audio',
                      recorded_duration_seconds: 7,
                      download_media_url: 'https://cdn.example/a.mp3',
                    },
                  ],
                },
              ],
            },
          ],
        }),
      );
      await json('seed', seed);
      const loaded = await recordedMessages('recs', 'with-media');
      expect(loaded.map((m) => [m.message_type, m.recorded_duration_seconds, m.media_content_type])).toEqual([
        ['screen', 3, 'video/webm'],
        ['audio', 3, 'audio/ogg'],
        ['audio', 7, null],
      ]);

      const out = join(dir, 'recs.json');
      await json('export', '--account', 'recs', '--out', out);
      const exported = JSON.parse(await readFile(out, 'utf8'));
      const messages = exported.accounts[0].conversations[0].messages;
      expect(messages.map((m: { media_file?: string }) => m.media_file)).toEqual([
        expect.stringMatching(/^recs-media\/recs\/[0-9a-f]{32}\.webm$/),
        expect.stringMatching(/^recs-media\/recs\/[0-9a-f]{32}\.ogg$/),
        undefined,
      ]);
      expect(messages[2].download_media_url).toBe('https://cdn.example/a.mp3');
      // The transcript goes with its recording; the one not made yet is not written.
      expect(messages.map((m: { transcript?: unknown }) => m.transcript)).toEqual([
        { language: 'en', segments: [{ start: 0.5, end: 2, text: 'Look at the chart' }] },
        undefined,
        undefined,
      ]);
      // The templates go with it, a recording beside the JSON, and so does the name a message was made from.
      expect(messages[0].template).toBe('Gone template');
      expect(exported.accounts[0].message_templates).toEqual([
        {
          name: 'Voice hello',
          text: '',
          format: 'text',
          creator: 'rae@recs.example',
          type: 'audio',
          media_file: expect.stringMatching(/^recs-media\/recs\/[0-9a-f]{32}\.ogg$/),
        },
        { name: 'Thanks', text: '<p>Thanks <b>a lot</b></p>', format: 'html' },
      ]);
      expect(await readFile(join(dir, messages[0].media_file))).toEqual(await readFile(fixture));
      expect((await stat(join(dir, messages[0].media_file))).mode & 0o777).toBe(0o600);

      // Loaded again as another account: new copies in the store, the same bytes, measured again.
      exported.accounts[0].key = 'recs2';
      exported.accounts[0].host = 'https://recs2.example.com';
      await writeFile(out, JSON.stringify(exported));
      await json('seed', out);
      const again = await recordedMessages('recs2', 'with-media');
      expect(again.map((m) => [m.message_type, m.recorded_duration_seconds, m.media_content_type])).toEqual(
        loaded.map((m) => [m.message_type, m.recorded_duration_seconds, m.media_content_type]),
      );
      expect(again[0]?.media_key).not.toBe(loaded[0]?.media_key);
      const templates = await pgQuery(
        `select t.name, t.text, t.message_type, t.recorded_duration_seconds, u.email from message_template t
         join account a on a.id = t.account_id left join account_user u on u.id = t.creator_id
         where a.key = 'recs2' order by t.id`,
      );
      expect(templates).toEqual([
        {
          name: 'Voice hello',
          text: '',
          message_type: 'audio',
          recorded_duration_seconds: 3,
          email: 'rae@recs.example',
        },
        {
          name: 'Thanks',
          text: '<p>Thanks <b>a lot</b></p>',
          message_type: 'text',
          recorded_duration_seconds: 0,
          email: null,
        },
      ]);
      expect(await readFile(join(mediaDir, again[0]?.media_key ?? ''))).toEqual(await readFile(fixture));
      // Its transcript came back with it, complete; the CLI shows it, its captions, and makes it again.
      const first = String(again[0]?.id);
      expect(await json('transcript', 'show', '--account', 'recs2', '--message', first)).toEqual({
        message_id: Number(first),
        status: 'complete',
        language: 'en',
        reason: null,
        text: 'Look at the chart',
      });
      expect((await cli('transcript', 'show', '--account', 'recs2', '--message', first, '--vtt')).stdout).toBe(
        'WEBVTT\n\n00:00:00.500 --> 00:00:02.000\nLook at the chart\n\n',
      );
      // Not made, and no engine configured here: off.
      expect((await json('transcript', 'show', '--account', 'recs2', '--message', String(again[1]?.id))).status).toBe(
        'off',
      );
      expect((await json('transcript', 'retry', '--account', 'recs2', '--message', first)).status).toBe('pending');
      expect((await json('transcript', 'show', '--account', 'recs2', '--message', first)).status).toBe('off');
      const none = await cli('transcript', 'show', '--account', 'recs2', '--message', String(again[2]?.id));
      expect([none.code, none.stderr]).toEqual([1, expect.stringContaining('has no recording kept here')]);

      // Without a folder for them, an export on standard output names recordings by their address.
      const plain = JSON.parse((await cli('export', '--account', 'recs')).stdout);
      expect(plain.accounts[0].conversations[0].messages[0].download_media_url).toMatch(
        /^https:\/\/recs\.example\.com\/media\/recs\/\d+$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a seed whose media file is no recording, loading nothing and keeping no byte', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-seed-media-'));
    try {
      const good = new URL('./fixtures/media/audio-3s.ogg', import.meta.url).pathname;
      await writeFile(join(dir, 'fake.webm'), '<!doctype html><script>alert(1)</script>');
      const seed = join(dir, 'bad.json');
      await writeFile(
        seed,
        JSON.stringify({
          accounts: [
            {
              key: 'badrecs',
              name: 'Bad',
              host: 'badrecs.example.com',
              conversations: [{ slug: 'x', messages: [{ media_file: good }, { media_file: 'fake.webm' }] }],
            },
          ],
        }),
      );
      const files = async () =>
        (await readdir(mediaDir, { recursive: true, withFileTypes: true }))
          .filter((e) => e.isFile())
          .map((e) => e.name);
      const before = await files();
      const refused = await cli('seed', seed);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/fake\.webm: That file is not a recording/);
      expect(await files()).toEqual(before);
      expect(await recordedMessages('badrecs', 'x')).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes the import source token from IMPORT_API_TOKEN or standard input, not only from --token', async () => {
    const missing = await cli('import-api', '--from', 'http://127.0.0.1:9', '--account', 'imp');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/give the source token: IMPORT_API_TOKEN/);
    // A source that says who asked: the token arrives from the environment.
    const { createServer } = await import('node:http');
    const sent: (string | undefined)[] = [];
    const source = createServer((req, res) => {
      sent.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"no","code":"unauthorized"}');
    });
    await new Promise<void>((r) => source.listen(0, '127.0.0.1', r));
    const from = `http://127.0.0.1:${(source.address() as { port: number }).port}`;
    const saved = env;
    env = { ...env, IMPORT_API_TOKEN: 'cnv_from_the_environment' };
    try {
      const tried = await cli('import-api', '--from', from, '--account', 'imp', '--rate', '1000');
      expect(tried.stderr).toMatch(/the source refused the token \(401\)/);
      // Or from standard input, which wins.
      const piped = await cliWithInput(
        'cnv_from_stdin\n',
        'import-api',
        '--from',
        from,
        '--account',
        'imp',
        '--token-stdin',
      );
      expect(piped.stderr).toMatch(/the source refused the token \(401\)/);
      expect(sent).toEqual(['Bearer cnv_from_the_environment', 'Bearer cnv_from_stdin']);
    } finally {
      env = saved;
      await new Promise((r) => source.close(r));
    }
  });

  it('writes an export readable by its owner only, and never through a file or link placed in its way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-export-'));
    try {
      const file = join(dir, 'demo.json');
      await json('export', '--account', 'demo', '--out', file);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      // A link pre-placed at <out>.partial, pointing at a file the export must not overwrite.
      const victim = join(dir, 'victim.txt');
      await writeFile(victim, 'precious');
      const out = join(dir, 'again.json');
      await symlink(victim, `${out}.partial`);
      const refused = await cli('export', '--account', 'demo', '--out', out);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/already exists/);
      expect(await readFile(victim, 'utf8')).toBe('precious');
      expect((await lstat(`${out}.partial`)).isSymbolicLink()).toBe(true);
      await expect(stat(out)).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('backs up the embedded database to a directory a server can start on, never while another process has it', async () => {
    if (!dataDir) {
      expect((await cli('backup', '--out', join(tmpdir(), 'never'))).stderr).toMatch(/pg_dump/);
      return;
    }
    const out = join(await mkdtemp(join(tmpdir(), 'convo-backup-')), 'copy');
    try {
      // This test's process has the directory open (its commands ran here): a CLI process of its
      // own is refused.
      const refused = await promisify(execFile)(process.execPath, [CLI, 'backup', '--out', out], { env }).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/open in process \d+/) });

      const made = await json('backup', '--out', out);
      expect(made.bytes).toBeGreaterThan(1_000_000);
      const copy = await openOrm({ kind: 'pglite', dataDir: out });
      try {
        const [row] = await copy.em.getConnection().execute('select count(*)::int as n from conversation');
        const [original] = await (async () => {
          const o = await openOrm({ kind: 'pglite', dataDir: dataDir as string });
          try {
            return await o.em.getConnection().execute('select count(*)::int as n from conversation');
          } finally {
            await o.close();
          }
        })();
        expect(row.n).toBe(original.n);
        expect(row.n).toBeGreaterThan(4_500);
      } finally {
        await copy.close();
      }
      expect((await cli('backup', '--out', out)).stderr).toMatch(/exists: give a new directory/);
    } finally {
      await rm(join(out, '..'), { recursive: true, force: true });
    }
  });

  it('explains mistakes, in text or JSON, and exits non-zero', async () => {
    const dup = await cli('account', 'create', '--key', 'acme', '--name', 'Again', '--host', 'https://x.example');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists/);
    const missing = await cli('token', 'create', '--account', 'nobody', '--json');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toEqual({ error: 'no account with key "nobody"' });
    const badSteps = await cli(
      'workflow',
      'create',
      '--account',
      'acme',
      '--name',
      'x',
      '--steps',
      '{"not":"an array"}',
    );
    expect(badSteps.code).not.toBe(0);
    expect(badSteps.stderr).toMatch(/JSON array/);
    const badHost = await cli('account', 'create', '--key', 'k2', '--name', 'K', '--host', 'ftp://nope');
    expect(badHost.stderr).toMatch(/origin/);
  });

  it('subscribes webhook endpoints, refusing plain http and private addresses unless allowed', async () => {
    const refused = await cli('webhook', 'add', '--account', 'acme', '--url', 'http://hooks.example.com/x');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/https/);
    const inside = await cli('webhook', 'add', '--account', 'acme', '--url', 'https://127.0.0.1/x');
    expect(inside.stderr).toMatch(/non-public/);
    const saved = env;
    env = { ...env, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
    try {
      const made = await json(
        'webhook',
        'add',
        '--account',
        'acme',
        '--url',
        'http://127.0.0.1:9/hook',
        '--events',
        'message_created',
      );
      expect(made).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['message_created'] });
      expect(made.secret).toMatch(/^whsec_/);
      const list = await json('webhook', 'list', '--account', 'acme');
      expect(list).toContainEqual(expect.objectContaining({ id: made.id, status: 'active', pending_deliveries: 0 }));
      expect(JSON.stringify(list)).not.toContain(made.secret);
      expect(await json('webhook', 'remove', '--account', 'acme', '--id', String(made.id))).toEqual({
        removed: made.id,
      });
    } finally {
      env = saved;
    }
  });

  it("subscribes a seed's webhook endpoints, and announces the seed to them only with --emit-events", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convo-seed-hooks-'));
    const file = (key: string) => {
      const path = join(dir, `${key}.json`);
      return writeFile(
        path,
        JSON.stringify({
          accounts: [
            {
              key,
              name: key,
              host: `${key}.example.com`,
              webhooks: [{ url: 'http://127.0.0.1:9/hook', events: ['message_created'] }],
              conversations: [{ title: 'Seeded', messages: [{ text: 'a' }, { text: 'b' }] }, { title: 'Quiet' }],
            },
          ],
        }),
      ).then(() => path);
    };
    try {
      // The server's policy refuses a private plain-http endpoint: the whole seed is refused.
      const refused = await cli('seed', await file('hooks-refused'));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/hooks-refused, webhook http:\/\/127\.0\.0\.1:9\/hook: .*https/);
      expect((await cli('token', 'list', '--account', 'hooks-refused')).stderr).toMatch(/no account/);

      const saved = env;
      env = { ...env, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
      try {
        const quiet = await json('seed', await file('hooks-quiet'));
        expect(quiet.accounts[0].webhooks[0]).toMatchObject({ url: 'http://127.0.0.1:9/hook' });
        expect(quiet.accounts[0].webhooks[0].secret).toMatch(/^whsec_/);
        const loud = await json('seed', await file('hooks-loud'), '--emit-events');
        const pending = async (key: string) =>
          (await json('webhook', 'list', '--account', key))[0].pending_deliveries as number;
        // Two messages announced (the endpoint takes message_created only); nothing without the flag.
        expect([await pending('hooks-quiet'), await pending('hooks-loud')]).toEqual([0, 2]);
        expect(loud.counts).toMatchObject({ conversations: 2, messages: 2 });
      } finally {
        env = saved;
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs as a process of its own: its output, and its exit code', async () => {
    const run = promisify(execFile);
    // A database of its own: this process holds the embedded one.
    const own = dataDir ? { ...env, DATA_DIR: await mkdtemp(join(tmpdir(), 'convo-cli-own-')) } : env;
    try {
      const version = await run(process.execPath, [CLI, '--version'], { env: own });
      expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
      const refused = await run(process.execPath, [CLI, 'token', 'list', '--account', 'nobody'], { env: own }).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(refused).toMatchObject({ code: 1, stderr: 'error: no account with key "nobody"\n' });
    } finally {
      if (own.DATA_DIR !== env.DATA_DIR) await rm(own.DATA_DIR ?? '', { recursive: true, force: true });
    }
  });

  it('documents every command with an example', async () => {
    const commands = [
      ['migrate'],
      ['account', 'create'],
      ['token', 'create'],
      ['token', 'list'],
      ['token', 'revoke'],
      ['user', 'add'],
      ['user', 'team'],
      ['member', 'add'],
      ['member', 'remove'],
      ['workflow', 'create'],
      ['workflow', 'list'],
      ['workflow', 'change'],
      ['intake-page', 'create'],
      ['intake-page', 'list'],
      ['intake-page', 'change'],
      ['seed'],
      ['demo'],
      ['webhook', 'add'],
      ['webhook', 'list'],
      ['webhook', 'remove'],
      ['webhook', 'deliveries'],
      ['webhook', 'redeliver'],
      ['template', 'create'],
      ['template', 'list'],
    ];
    for (const command of commands) {
      const help = await cli(...command, '--help');
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Example:/);
    }
  });
});
