/**
 * The hand-written baseline for `npm run bench`: plain node:http and pg, hand-written SQL, the same
 * JSON as the product for the same requests on the same database. It is what a competent developer
 * would write without a framework; it lives beside the benchmark, never in the product.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 10) });
const PREFIX = '/api/v1/conversations/';

const CONVERSATION = `
  c.id, c.title, c.slug, c.anyone_can_post, c.allow_anonymous_messages, c.allow_search_engines,
  c.via_primary_intake_page, c.intake_page_id, c.workflow,
  to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as created,
  to_char(c.created_at at time zone 'UTC', 'FMMonth FMDDth, YYYY HH12:MIAM') || ' UTC' as created_nice,
  coalesce((select json_agg(json_build_object('id', u.id, 'email', u.email, 'name', u.name) order by u.id)
    from conversation_member cm join account_user u on u.id = cm.user_id where cm.conversation_id = c.id), '[]') as users,
  coalesce((select json_agg(json_build_object('id', t.id, 'name', t.name) order by t.id)
    from conversation_tag ct join tag t on t.id = ct.tag_id where ct.conversation_id = c.id), '[]') as tags,
  coalesce((select json_agg(json_build_object('id', m.id, 'type', m.message_type, 'duration', m.recorded_duration_seconds,
      'anonymous', m.anonymous, 'author_id', u.id, 'author_name', u.name, 'author_email', u.email, 'text', m.text,
      'media', m.download_media_url) order by m.created_at, m.id)
    from message m left join account_user u on u.id = m.author_id where m.conversation_id = c.id), '[]') as messages`;

const LATEST = 'select id from conversation where account_id = $1 order by created_at desc, id desc limit 1';

interface Account {
  id: number;
  key: string;
  host: string;
  d_post: boolean;
  d_anon: boolean;
  d_search: boolean;
  template: string;
  owner_id: number | null;
  owner_email: string | null;
  owner_name: string | null;
}

function send(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function account(req: IncomingMessage): Promise<Account | null> {
  const header = req.headers.authorization ?? '';
  const token = header.replace(/^bearer\s+/i, '').trim();
  if (!token) return null;
  const hash = createHash('sha256').update(token).digest('hex');
  const { rows } = await pool.query<Account>(
    `select a.id, a.key, a.host, a.default_anyone_can_post as d_post, a.default_allow_anonymous_messages as d_anon,
       a.default_allow_search_engines as d_search, a.title_template as template,
       u.id as owner_id, u.email as owner_email, u.name as owner_name
     from api_token t join account a on a.id = t.account_id left join account_user u on u.id = a.owner_id
     where t.token_hash = $1 and t.revoked_at is null`,
    [hash],
  );
  return rows[0] ?? null;
}

function conversation(a: Account, r: any, withWorkflow: boolean, withTimes: boolean) {
  const url = `${a.host}/c/${r.slug}`;
  const out: Record<string, unknown> = {
    id: r.id,
    title: r.title,
    slug: r.slug,
    public: r.anyone_can_post,
    via_primary_intake_page: r.via_primary_intake_page,
    intake_page_id: r.intake_page_id,
    conversation_url: url,
    conversation_embed_url: `${a.host}/embeds/conversations/${a.key}/${r.slug}`,
    anyone_can_post: r.anyone_can_post,
    allow_anonymous_messages: r.allow_anonymous_messages,
    allow_search_engines: r.allow_search_engines,
    tags: r.tags,
    users: r.users,
    messages: r.messages.map((m: any) => ({
      id: m.id,
      conversation_id: r.id,
      message_type: m.type,
      recorded_duration_seconds: m.duration,
      author: m.anonymous
        ? { anonymous: true }
        : { anonymous: false, id: m.author_id, name: m.author_name, email: m.author_email },
      message_url: `${url}#message-${m.id}`,
      embed_message_url: `${a.host}/embeds/messages/${a.key}/${m.id}&show_author=true`,
      download_media_url: m.media,
      text: m.text,
    })),
  };
  if (withWorkflow) out.workflow = r.workflow ?? {};
  if (withTimes) {
    out.conversation_created_time = r.created;
    out.conversation_credated_time_nice = r.created_nice;
  }
  return out;
}

async function getOne(a: Account, q: URLSearchParams, res: ServerResponse) {
  const title = q.get('title') || null;
  const slug = q.get('slug') || null;
  const conditions: string[] = [];
  const params: unknown[] = [a.id];
  if (title !== null) conditions.push(`title_key = $${params.push(title.toLowerCase())}`);
  if (slug !== null) conditions.push(`lower(slug collate "C") = $${params.push(slug.toLowerCase())}`);
  const pick = conditions.length
    ? `coalesce((select id from conversation where account_id = $1 and ${conditions.join(' and ')} order by created_at desc, id desc limit 1), (${LATEST}))`
    : `(${LATEST})`;
  const { rows } = await pool.query(`select ${CONVERSATION} from conversation c where c.id = ${pick}`, params);
  if (!rows[0]) return send(res, 404, { error: 'No conversations found', code: 'conversation_not_found' });
  send(res, 200, conversation(a, rows[0], true, true));
}

async function getPage(a: Account, q: URLSearchParams, res: ServerResponse) {
  const page = q.has('page') ? Number(q.get('page')) : 1;
  if (!Number.isInteger(page) || page < 1)
    return send(res, 422, { error: 'page must be a whole number', code: 'invalid_input' });
  const { rows } = await pool.query(
    `select ${CONVERSATION} from (select id, created_at from conversation where account_id = $1
       order by created_at desc, id desc limit 50 offset $2) p join conversation c on c.id = p.id
     order by p.created_at desc, p.id desc`,
    [a.id, (page - 1) * 50],
  );
  if (rows.length === 0) return send(res, 404, { error: 'No conversations found', code: 'conversation_not_found' });
  send(res, 200, { conversations: rows.map((r) => conversation(a, r, true, false)) });
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const ordinal = (d: number) =>
  `${d}${d % 100 >= 11 && d % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][d % 10] ?? 'th')}`;

async function create(a: Account, body: Record<string, unknown>, res: ServerResponse) {
  const now = new Date();
  const title =
    typeof body.title === 'string'
      ? body.title
      : a.template.replaceAll(
          '{date}',
          `${MONTHS[now.getUTCMonth()]} ${ordinal(now.getUTCDate())}, ${now.getUTCFullYear()}`,
        );
  const slug = typeof body.slug === 'string' ? body.slug : randomBytes(13).toString('hex').slice(0, 25);
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(slug)) return send(res, 422, { error: 'bad slug', code: 'invalid_input' });
  const post = typeof body.anyone_can_post === 'boolean' ? body.anyone_can_post : a.d_post;
  const anon = typeof body.allow_anonymous_messages === 'boolean' ? body.allow_anonymous_messages : a.d_anon;
  const search = typeof body.allow_search_engines === 'boolean' ? body.allow_search_engines : a.d_search;
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query(
      `insert into conversation (account_id, title, title_key, slug, anyone_can_post, allow_anonymous_messages,
         allow_search_engines, via_primary_intake_page) values ($1, $2, $3, $4, $5, $6, $7, false) returning id`,
      [a.id, title, title.toLowerCase(), slug, post, anon, search],
    );
    const id = rows[0].id as number;
    if (a.owner_id !== null) {
      await client.query('insert into conversation_member (conversation_id, user_id, account_id) values ($1, $2, $3)', [
        id,
        a.owner_id,
        a.id,
      ]);
    }
    await client.query('commit');
    const users = a.owner_id === null ? [] : [{ id: a.owner_id, email: a.owner_email, name: a.owner_name }];
    const row = {
      id,
      title,
      slug,
      anyone_can_post: post,
      allow_anonymous_messages: anon,
      allow_search_engines: search,
      via_primary_intake_page: false,
      intake_page_id: null,
      tags: [],
      users,
      messages: [],
    };
    send(res, 201, conversation(a, row, false, false));
  } catch (e) {
    await client.query('rollback');
    if ((e as { code?: string }).code === '23505') return send(res, 409, { error: 'slug taken', code: 'slug_taken' });
    throw e;
  } finally {
    client.release();
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? '/', 'http://baseline');
    const a = await account(req);
    if (!a) return send(res, 401, { error: 'unauthorized', code: 'unauthorized' });
    const op = url.pathname.startsWith(PREFIX) ? url.pathname.slice(PREFIX.length) : '';
    if (req.method === 'GET' && op === 'get_conversation') return await getOne(a, url.searchParams, res);
    if (req.method === 'GET' && op === 'get_conversations') return await getPage(a, url.searchParams, res);
    if (req.method === 'POST' && op === 'create_conversation') return await create(a, await readJson(req), res);
    send(res, 404, { error: 'no such endpoint', code: 'route_not_found' });
  } catch (e) {
    // A client that hangs up mid-request (as the load generator does at the end of a run) is no fault.
    if ((e as { code?: string }).code === 'ECONNRESET' || res.destroyed) return;
    console.error(e);
    send(res, 500, { error: 'internal server error', code: 'internal' });
  }
});

server.listen(Number(process.env.PORT ?? 3100), '127.0.0.1', () => console.log('baseline listening'));
process.once('SIGTERM', () => server.close(() => void pool.end()));
