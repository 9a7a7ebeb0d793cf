import type { TeamRole } from '@convo/domain';
import { type EntityManager, IsolationLevel } from '@mikro-orm/core';
import { query } from '../repositories/sql.ts';
import { AdminError } from './errors.ts';

/*
 * The exporter: accounts written out in the seed format, so that `seed` loads them back. The
 * conversations are read a page at a time (in id order, so a reload gives them ids in the same
 * order, and pages and member, tag and message lists come back in the same order) and written one
 * per line; an account of any size goes through in constant memory. Everything is read in one
 * REPEATABLE READ transaction: the file is one moment of the database, even while the server runs.
 *
 * Secrets never leave: API tokens (only their hashes are stored anyway), webhook endpoints with
 * their signing secrets, sign-in sessions and links. The file's `comment` says so.
 */

export const EXPORT_COMMENT =
  'Exported by convo export in the seed format (load it with convo seed). Not included: API tokens, ' +
  'webhook endpoints and their signing secrets, site sessions and sign-in links, webhook and mail queues. ' +
  'A loaded export gets a new API token, printed by seed.';

/** Conversations read per statement. */
const PAGE = 500;

/** A time as the database holds it, to the microsecond, in UTC: the same text on every export. */
const TIME = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export interface ExportOptions {
  /** Only conversations created after this time (ISO 8601 with offset): an incremental export. */
  since?: string;
  /**
   * Copies out a recording this server keeps and says where it went (the seed's `media_file`).
   * Without it, the export names each recording by its `download_media_url` instead.
   */
  media?: (recording: ExportedRecording) => Promise<string>;
  /** After each page of conversations: how many are written of how many. */
  onProgress?: (p: ExportProgress) => void;
}

/** A recording a message carries, as the store keeps it. */
export interface ExportedRecording {
  account: string;
  key: string;
  contentType: string;
}

/** A message as the export's statement builds it: the seed's fields, and its recording's key. */
interface ExportedMessage extends Record<string, unknown> {
  media_key: string | null;
  media_content_type: string | null;
  template: string | null;
  internal: boolean;
  id: number;
  parent_id: number | null;
  at_seconds: number | null;
  reactions: { reaction: string; user: string | null }[] | null;
  transcript: { language: string | null; segments: unknown[] } | null;
}

/** A recording copied out beside the export (the seed's `media_file`); null when the export copies none. */
const copiedOut = (
  options: ExportOptions,
  account: string,
  key: string | null,
  contentType: string | null,
): Promise<string | null> =>
  key !== null && contentType !== null && options.media
    ? options.media({ account, key, contentType })
    : Promise.resolve(null);

export interface ExportProgress {
  account: string;
  conversations: number;
  messages: number;
  /** Conversations the whole export will write. */
  total: number;
}

interface AccountRow {
  id: number;
  key: string;
  name: string;
  host: string;
  title_template: string;
  any: boolean;
  anon: boolean;
  search: boolean;
  rate_limit: number | null;
  owner: string | null;
}

/** Workflows and intake pages are named in a seed; where a name repeats, by position (from 1). */
function referencer<T extends { id: number; name: string }>(rows: T[]) {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.name, (counts.get(r.name) ?? 0) + 1);
  const refs = new Map(rows.map((r, i) => [r.id, counts.get(r.name) === 1 ? r.name : i + 1] as const));
  return (id: number, where: string): string | number => {
    const ref = refs.get(id);
    if (ref === undefined) throw new AdminError(`${where} refers to ${id}, which is not in the account`);
    return ref;
  };
}

const json = (v: unknown) => JSON.stringify(v);

async function header(em: EntityManager, a: AccountRow, options: ExportOptions) {
  const users = await query<{ email: string; name: string; team_role: TeamRole | null }>(
    em,
    'select email, name, team_role from account_user where account_id = ? order by id',
    [a.id],
  );
  const tags = await query<{ name: string }>(em, 'select name from tag where account_id = ? order by id', [a.id]);
  const workflows = await query<{ id: number; name: string; steps: unknown; disabled: boolean }>(
    em,
    'select id, name, steps, disabled_at is not null as disabled from workflow where account_id = ? order by id',
    [a.id],
  );
  const pages = await query<{
    id: number;
    name: string;
    is_primary: boolean;
    workflow_id: number | null;
    key: string;
    title: string;
    welcome_text: string;
    conversation_title: string;
    allow_anonymous: boolean;
    disabled: boolean;
    team: string[] | string;
  }>(
    em,
    `select p.id, p.name, p.is_primary, p.workflow_id, p.key, p.title, p.welcome_text, p.conversation_title, p.allow_anonymous,
       p.disabled_at is not null as disabled,
       (select coalesce(json_agg(u.email order by u.id), '[]') from intake_page_member m
          join account_user u on u.id = m.user_id where m.intake_page_id = p.id) as team
     from intake_page p where p.account_id = ? order by p.id`,
    [a.id],
  );
  const templates = await query<{
    name: string;
    text: string;
    format: string;
    creator: string | null;
    message_type: string;
    media_key: string | null;
    media_content_type: string | null;
  }>(
    em,
    `select t.name, t.text, t.format, u.email as creator, t.message_type, t.media_key, t.media_content_type
     from message_template t left join account_user u on u.id = t.creator_id where t.account_id = ? order by t.id`,
    [a.id],
  );
  const workflowRef = referencer(workflows);
  const pageRef = referencer(pages);
  const fields: Record<string, unknown> = {
    key: a.key,
    name: a.name,
    host: a.host,
    title_template: a.title_template,
    defaults: { anyone_can_post: a.any, allow_anonymous_messages: a.anon, allow_search_engines: a.search },
    rate_limit: a.rate_limit,
    ...(a.owner === null ? {} : { owner: a.owner }),
    users: users.map((u) => ({ email: u.email, name: u.name, ...(u.team_role ? { team: u.team_role } : {}) })),
    tags: tags.map((t) => t.name),
    workflows: workflows.map((w) => ({
      name: w.name,
      steps: typeof w.steps === 'string' ? JSON.parse(w.steps) : w.steps,
      ...(w.disabled ? { disabled: true } : {}),
    })),
    // A template's recording needs the export's media files: without them, it is left out.
    message_templates: await Promise.all(
      templates.map(async (t) => {
        const file = await copiedOut(options, a.key, t.media_key, t.media_content_type);
        if (t.text === '' && file === null) return null;
        return {
          name: t.name,
          text: t.text,
          format: t.format,
          ...(t.creator === null ? {} : { creator: t.creator }),
          ...(file === null ? {} : { type: t.message_type, media_file: file }),
        };
      }),
    ).then((all) => all.filter((t) => t !== null)),
    intake_pages: pages.map((p) => {
      const team: string[] = typeof p.team === 'string' ? JSON.parse(p.team) : p.team;
      return {
        name: p.name,
        primary: p.is_primary,
        ...(p.workflow_id === null ? {} : { workflow: workflowRef(p.workflow_id, `intake page ${p.name}`) }),
        key: p.key,
        ...(p.title === '' ? {} : { title: p.title }),
        ...(p.welcome_text === '' ? {} : { welcome_text: p.welcome_text }),
        ...(p.conversation_title === '' ? {} : { conversation_title: p.conversation_title }),
        ...(p.allow_anonymous ? { allow_anonymous: true } : {}),
        ...(team.length === 0 ? {} : { team }),
        ...(p.disabled ? { disabled: true } : {}),
      };
    }),
  };
  const primary = pages.find((p) => p.is_primary);
  return { fields, workflowRef, pageRef, primaryRef: primary ? pageRef(primary.id, 'the primary page') : null };
}

interface ConversationRow {
  id: number;
  line: Record<string, unknown>;
  page_id: number | null;
  via_primary: boolean;
  workflow_id: number | null;
  messages: number;
}

/** One page of conversations after `afterId`, each as its seed object (built by the database). */
const conversationsPage = (em: EntityManager, accountId: number, afterId: number, since: string | null) =>
  query<ConversationRow>(
    em,
    `select c.id, c.intake_page_id as page_id, c.via_primary_intake_page as via_primary,
       (c.workflow->>'id')::int as workflow_id,
       (select count(*)::int from message m where m.conversation_id = c.id) as messages,
       json_build_object(
         'title', c.title, 'slug', c.slug, 'anyone_can_post', c.anyone_can_post,
         'allow_anonymous_messages', c.allow_anonymous_messages, 'allow_search_engines', c.allow_search_engines,
         'workflow_name', c.workflow->'name', 'workflow_steps', c.workflow->'steps',
         'created_at', ${TIME('c.created_at')},
         'members', coalesce((select json_agg(u.email order by u.id) from conversation_member cm
                   join account_user u on u.id = cm.user_id where cm.conversation_id = c.id), '[]'),
         'tags', coalesce((select json_agg(t.name order by t.id) from conversation_tag ct
                   join tag t on t.id = ct.tag_id where ct.conversation_id = c.id), '[]'),
         'messages', coalesce((select json_agg(json_build_object(
                   'author', u.email, 'text', m.text, 'format', m.format, 'type', m.message_type,
                   'recorded_duration_seconds', m.recorded_duration_seconds,
                   'download_media_url', coalesce(m.download_media_url, case when m.media_key is not null
                     then (select host from account where id = m.account_id) || '/media/' ||
                          (select key from account where id = m.account_id) || '/' || m.id end),
                   'created_at', ${TIME('m.created_at')},
                   'hidden', m.hidden_at is not null,
                   'template', m.template_name, 'internal', m.internal, 'id', m.id, 'parent_id', m.parent_id, 'at_seconds', m.at_seconds,
                   'reactions', (select json_agg(json_build_object('reaction', r.reaction, 'user', ru.email) order by r.id)
                     from message_reaction r left join account_user ru on ru.id = r.user_id where r.message_id = m.id),
                   'media_key', m.media_key, 'media_content_type', m.media_content_type,
                   'transcript', (select json_build_object('language', t.language, 'segments', t.segments)
                     from transcript t where t.media_key = m.media_key and t.status = 'complete'))
                 order by m.created_at, m.id)
               from message m left join account_user u on u.id = m.author_id
               where m.conversation_id = c.id), '[]')) as line
     from conversation c
     where c.account_id = ? and c.id > ? and (?::timestamptz is null or c.created_at > ?::timestamptz)
     order by c.id limit ${PAGE}`,
    [accountId, afterId, since, since],
  );

const ACCOUNT_COLUMNS = `a.id, a.key, a.name, a.host, a.title_template, a.default_anyone_can_post as any,
  a.default_allow_anonymous_messages as anon, a.default_allow_search_engines as search, a.rate_limit,
  (select email from account_user u where u.id = a.owner_id) as owner`;

/**
 * The export of `accounts` (keys; `'all'` for every account), as pieces of JSON text in order.
 * The caller writes them where it likes; nothing but one page of conversations is held at a time.
 */
export async function* exportAccounts(
  em: EntityManager,
  accounts: string[] | 'all',
  options: ExportOptions = {},
): AsyncGenerator<string> {
  const since = options.since ?? null;
  if (since !== null && Number.isNaN(Date.parse(since))) throw new AdminError(`--since: not a time: ${since}`);
  const fork = em.fork();
  await fork.begin({ isolationLevel: IsolationLevel.REPEATABLE_READ, readOnly: true });
  try {
    const found =
      accounts === 'all'
        ? await query<AccountRow>(fork, `select ${ACCOUNT_COLUMNS} from account a order by a.id`)
        : await query<AccountRow>(fork, `select ${ACCOUNT_COLUMNS} from account a where a.key = any(?::text[])`, [
            `{${accounts.map((key) => JSON.stringify(key)).join(',')}}`,
          ]);
    // Named accounts come out in the order they were named, each once.
    const rows =
      accounts === 'all'
        ? found
        : [...new Set(accounts)].map((key) => {
            const row = found.find((r) => r.key === key);
            if (!row) throw new AdminError(`no account with key ${JSON.stringify(key)}`);
            return row;
          });
    const [count] = await query<{ n: number }>(
      fork,
      `select count(*)::int as n from conversation where account_id = any(?::int[])
         and (?::timestamptz is null or created_at > ?::timestamptz)`,
      [`{${rows.map((r) => r.id).join(',')}}`, since, since],
    );
    const progress: ExportProgress = { account: '', conversations: 0, messages: 0, total: count?.n ?? 0 };

    yield `{"comment":${json(EXPORT_COMMENT)},\n"accounts":[`;
    for (const [i, account] of rows.entries()) {
      progress.account = account.key;
      const { fields, workflowRef, pageRef, primaryRef } = await header(fork, account, options);
      const head = json(fields);
      yield `${i === 0 ? '\n' : ',\n'}${head.slice(0, -1)},"conversations":[`;
      let after = 0;
      let first = true;
      for (;;) {
        const page = await conversationsPage(fork, account.id, after, since);
        if (page.length === 0) break;
        const lines: string[] = [];
        for (const c of page) {
          const { workflow_name, workflow_steps, ...line } =
            typeof c.line === 'string' ? (JSON.parse(c.line) as Record<string, unknown>) : c.line;
          const where = `conversation ${line.slug}`;
          const intakePage = c.via_primary ? primaryRef : c.page_id === null ? null : pageRef(c.page_id, where);
          const workflow =
            c.workflow_id === null
              ? null
              : { of: workflowRef(c.workflow_id, `${where}'s workflow`), name: workflow_name, steps: workflow_steps };
          // A thread reply names its thread's first message by its position in the list.
          const exported = line.messages as ExportedMessage[];
          const positions = new Map(exported.map((m, at) => [m.id, at + 1]));
          const messages = await Promise.all(
            exported.map(
              async (
                {
                  media_key,
                  media_content_type,
                  template,
                  internal,
                  id: _id,
                  parent_id,
                  at_seconds,
                  reactions,
                  transcript,
                  ...m
                },
                at,
              ) => {
                const file = await copiedOut(options, account.key, media_key, media_content_type);
                const threadOf = parent_id === null ? undefined : positions.get(parent_id);
                return {
                  ...m,
                  ...(internal ? { internal } : {}),
                  ...(template === null ? {} : { template }),
                  ...(threadOf !== undefined && threadOf <= at ? { thread_of: threadOf } : {}),
                  ...(threadOf !== undefined && threadOf <= at && at_seconds !== null ? { at_seconds } : {}),
                  ...(file === null ? {} : { download_media_url: null, media_file: file }),
                  // A transcript goes with its recording's file (a seed loads one only beside one).
                  ...(file === null || transcript === null ? {} : { transcript }),
                  ...(reactions === null ? {} : { reactions }),
                };
              },
            ),
          );
          lines.push(
            json({
              title: line.title,
              slug: line.slug,
              anyone_can_post: line.anyone_can_post,
              allow_anonymous_messages: line.allow_anonymous_messages,
              allow_search_engines: line.allow_search_engines,
              ...(intakePage === null ? {} : { intake_page: intakePage }),
              workflow,
              created_at: line.created_at,
              members: line.members,
              tags: line.tags,
              messages,
            }),
          );
          progress.messages += messages.length;
        }
        yield `${first ? '\n' : ',\n'}${lines.join(',\n')}`;
        first = false;
        progress.conversations += page.length;
        after = (page[page.length - 1] as ConversationRow).id;
        options.onProgress?.(progress);
      }
      yield '\n]}';
    }
    yield '\n]}\n';
  } finally {
    await fork.rollback();
  }
}
