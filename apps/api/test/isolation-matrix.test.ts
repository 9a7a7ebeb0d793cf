import { operations } from '@convo/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apiCall,
  BASE,
  type Call,
  call,
  createJson,
  type Harness,
  makeAccount,
  newToken,
  openHarness,
  REST,
  revoke,
  type TestAccount,
} from './support/harness.ts';

/*
 * OWASP API1/API5: every REST operation and every tRPC procedure, called with each kind of
 * credential. Another account's token must see nothing of ours — not through slugs, titles,
 * intake page ids or paging — and what it gets must be exactly what it gets for objects that do
 * not exist. No token, a malformed one and a revoked one get 401 and change nothing.
 */

let h: Harness;
let a: TestAccount;
let b: TestAccount;
let revoked: string;
let aIds: number[];
/** Alpha's webhook endpoints: one for each delete its own token makes, one no other credential may touch. */
let alphaHooks: { rest: number; trpc: number; guarded: number };
/** Alpha's message templates, as its hooks: one for each delete its own token makes, one nobody else may touch. */
let alphaTemplates: { rest: number; trpc: number; guarded: number };
/** Alpha's message in its private conversation. */
let alphaMessage: number;

const SECRET = { title: 'Alpha private plans', slug: 'alpha-private' };

beforeAll(async () => {
  // Endpoints on 127.0.0.1 may be subscribed here; nothing is delivered (no worker runs).
  h = await openHarness({ services: { webhookTargets: { allowHttp: true, allowPrivate: true } } });
  a = await makeAccount(h, 'alpha');
  b = await makeAccount(h, 'beta');
  const made = await createJson(h, a.token, SECRET);
  const more = await Promise.all(
    Array.from({ length: 57 }, (_, i) => createJson(h, a.token, { title: `Alpha ${i}`, slug: `alpha-${i}` })),
  );
  aIds = [made.body.id, ...more.map((r) => r.body.id)];
  // A message in the private conversation, for get_messages and get_message_views to find (or not).
  const message = await restPost(
    headersFor('own'),
    { conversation_id: made.body.id, text: 'Alpha secret words' },
    '../messages/create_message',
  );
  expect(message.status).toBe(201);
  alphaMessage = message.body.id;
  await createJson(h, b.token, { title: 'Beta only', slug: 'beta-only' });
  const extra = await newToken(h, a.id);
  await revoke(h, a.id, extra.id);
  revoked = extra.token;
  const hook = async () =>
    (await restHooks(headersFor('own'), 'POST', '', { url: 'http://127.0.0.1:9/alpha-hook' })).body.id as number;
  alphaHooks = { rest: await hook(), trpc: await hook(), guarded: await hook() };
  const template = async (name: string) =>
    (await restTemplates(headersFor('own'), 'POST', '', { name, text: 'Alpha template words' })).body.id as number;
  alphaTemplates = {
    rest: await template('alpha rest'),
    trpc: await template('alpha trpc'),
    guarded: await template('alpha guarded'),
  };
});
afterAll(async () => h?.close());

type Credential = 'own' | 'other' | 'none' | 'malformed' | 'revoked';

const MALFORMED = [
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNz',
  'Bearer cnv_\u00ff\u00fe',
  `Bearer ${'x'.repeat(5000)}`,
  'cnv_',
];

function headersFor(credential: Credential, variant = 0): Record<string, string> {
  switch (credential) {
    case 'own':
      return { authorization: `Bearer ${a.token}` };
    case 'other':
      return { authorization: `Bearer ${b.token}` };
    case 'none':
      return {};
    case 'malformed':
      return { authorization: MALFORMED[variant % MALFORMED.length] as string };
    case 'revoked':
      return { authorization: revoked };
  }
}

interface Operation {
  name: string;
  /** The operation it calls, by its procedure's path (`operations` in @convo/router). */
  of: string;
  /** Sends the operation; `lookup` is what it looks for (a slug, a title, an intake page id, a page). */
  send(headers: Record<string, string>, lookup: 'secret' | 'absent'): Promise<Call>;
  write?: boolean;
}

const rest = (path: string, headers: Record<string, string>) => call(h, new Request(`${REST}/${path}`, { headers }));
const restPost = (headers: Record<string, string>, body: unknown, operation = 'create_conversation') =>
  call(
    h,
    new Request(`${REST}/${operation}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
const trpcQuery = (procedure: string, input: unknown, headers: Record<string, string>) =>
  call(h, new Request(`${BASE}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers }));
const trpcMutation = (procedure: string, input: unknown, headers: Record<string, string>) =>
  call(
    h,
    new Request(`${BASE}/trpc/${procedure}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    }),
  );

const restAt =
  (area: string) =>
  (headers: Record<string, string>, method: string, path = '', body?: unknown): Promise<Call> =>
    apiCall(h, method, `/${area}${path}`, headers, body);
const restHooks = restAt('webhooks');
/** The endpoint a delete aims at: alpha's (one its own token may delete, or one nobody else may), or none. */
const hookTarget = (headers: Record<string, string>, l: 'secret' | 'absent', own: 'rest' | 'trpc') =>
  l === 'absent' ? 999_999 : headers.authorization === `Bearer ${a.token}` ? alphaHooks[own] : alphaHooks.guarded;

/** The template a change or delete aims at: as hookTarget. */
const templateTarget = (headers: Record<string, string>, l: 'secret' | 'absent', own: 'rest' | 'trpc') =>
  l === 'absent'
    ? 999_999
    : headers.authorization === `Bearer ${a.token}`
      ? alphaTemplates[own]
      : alphaTemplates.guarded;

/** The conversation a delete aims at: with alpha's token one of two given up to it, else one that stays; or none. */
const deleteTarget = (headers: Record<string, string>, l: 'secret' | 'absent', own: 'rest' | 'trpc') =>
  l === 'absent'
    ? 2_000_000_000
    : headers.authorization === `Bearer ${a.token}`
      ? (aIds[own === 'rest' ? 3 : 4] as number)
      : (aIds[5] as number);

/**
 * The team change a call asks for: alpha's own token gives its owner the role they have; every
 * other credential takes alpha's owner (or an address nobody has) off the team.
 */
const teamChange = (headers: Record<string, string>, l: 'secret' | 'absent') =>
  headers.authorization === `Bearer ${a.token}`
    ? { email: 'owner@alpha.example.com', role: 'owner' }
    : { email: l === 'secret' ? 'owner@alpha.example.com' : 'nobody@nowhere.example', role: 'none' };

let created = 0;
const unique = () => `matrix-${++created}`;

const restWorkflows = restAt('workflows');
const TAG_STEP = { trigger: { type: 'conversation.created' }, action: { type: 'add_tags', tags: ['matrix'] } };
const restPages = restAt('intake_pages');
const restTemplates = restAt('message_templates');
/** The intake page a change aims at: alpha's (whoever asks), or none. */
const pageTarget = (l: 'secret' | 'absent') => (l === 'absent' ? 999_999 : a.secondaryPageId);
/** The workflow a change aims at: alpha's (whoever asks), or none. */
const workflowTarget = (l: 'secret' | 'absent') => (l === 'absent' ? 999_999 : a.workflowId);

const OPERATIONS: Operation[] = [
  {
    name: 'REST get_conversation by slug',
    of: 'conversations.getConversation',
    send: (hd, l) => rest(`get_conversation?slug=${l === 'secret' ? SECRET.slug : 'no-such-slug'}`, hd),
  },
  {
    name: 'REST get_conversation by slug, other case',
    of: 'conversations.getConversation',
    send: (hd, l) => rest(`get_conversation?slug=${l === 'secret' ? 'ALPHA-PRIVATE' : 'NO-SUCH-SLUG'}`, hd),
  },
  {
    name: 'REST get_conversation by title',
    of: 'conversations.getConversation',
    send: (hd, l) =>
      rest(`get_conversation?title=${encodeURIComponent(l === 'secret' ? SECRET.title : 'No such')}`, hd),
  },
  {
    name: 'REST get_conversation, latest',
    of: 'conversations.getConversation',
    send: (hd) => rest('get_conversation', hd),
  },
  {
    name: 'REST get_conversations page 1',
    of: 'conversations.getConversations',
    send: (hd) => rest('get_conversations?page=1', hd),
  },
  {
    name: 'REST get_conversations page 2',
    of: 'conversations.getConversations',
    send: (hd) => rest('get_conversations?page=2', hd),
  },
  {
    name: 'REST create_conversation through an intake page',
    of: 'conversations.createConversation',
    write: true,
    send: (hd, l) => restPost(hd, { slug: unique(), intake_page_id: l === 'secret' ? a.secondaryPageId : 999_999 }),
  },
  {
    name: 'REST create_conversation with a slug the other account uses',
    of: 'conversations.createConversation',
    write: true,
    send: (hd) => restPost(hd, { slug: `${unique()}-${SECRET.slug}` }),
  },
  {
    name: 'tRPC conversations.get by slug',
    of: 'conversations.getConversation',
    send: (hd, l) =>
      trpcQuery('conversations.getConversation', { slug: l === 'secret' ? SECRET.slug : 'no-such-slug' }, hd),
  },
  {
    name: 'tRPC conversations.get by title',
    of: 'conversations.getConversation',
    send: (hd, l) =>
      trpcQuery('conversations.getConversation', { title: l === 'secret' ? SECRET.title : 'No such' }, hd),
  },
  {
    name: 'tRPC conversations.list page 2',
    of: 'conversations.getConversations',
    send: (hd) => trpcQuery('conversations.getConversations', { page: 2 }, hd),
  },
  {
    name: 'REST get_account',
    of: 'account.getAccount',
    send: (hd) => call(h, new Request(`${BASE}/api/v1/account`, { headers: hd })),
  },
  { name: 'tRPC account.get', of: 'account.getAccount', send: (hd) => trpcQuery('account.getAccount', {}, hd) },
  { name: 'REST list webhooks', of: 'webhooks.listWebhooks', send: (hd) => restHooks(hd, 'GET') },
  {
    name: 'REST delete a webhook',
    of: 'webhooks.deleteWebhook',
    write: true,
    send: (hd, l) => restHooks(hd, 'DELETE', `/${hookTarget(hd, l, 'rest')}`),
  },
  {
    name: 'REST create a webhook',
    of: 'webhooks.createWebhook',
    write: true,
    send: (hd) => restHooks(hd, 'POST', '', { url: 'http://127.0.0.1:9/hook', events: ['message_created'] }),
  },
  { name: 'tRPC webhooks.list', of: 'webhooks.listWebhooks', send: (hd) => trpcQuery('webhooks.listWebhooks', {}, hd) },
  {
    name: 'tRPC webhooks.delete',
    of: 'webhooks.deleteWebhook',
    write: true,
    send: (hd, l) => trpcMutation('webhooks.deleteWebhook', { id: hookTarget(hd, l, 'trpc') }, hd),
  },
  {
    name: 'tRPC webhooks.create',
    of: 'webhooks.createWebhook',
    write: true,
    send: (hd) => trpcMutation('webhooks.createWebhook', { url: 'http://127.0.0.1:9/hook' }, hd),
  },
  { name: 'REST list workflows', of: 'workflows.listWorkflows', send: (hd) => restWorkflows(hd, 'GET') },
  {
    name: 'REST create a workflow',
    of: 'workflows.createWorkflow',
    write: true,
    send: (hd) => restWorkflows(hd, 'POST', '', { name: unique(), steps: [TAG_STEP] }),
  },
  {
    name: 'REST change a workflow',
    of: 'workflows.changeWorkflow',
    write: true,
    send: (hd, l) => restWorkflows(hd, 'PATCH', `/${workflowTarget(l)}`, { name: 'renamed', steps: [TAG_STEP] }),
  },
  {
    name: 'tRPC workflows.list',
    of: 'workflows.listWorkflows',
    send: (hd) => trpcQuery('workflows.listWorkflows', {}, hd),
  },
  {
    name: 'tRPC workflows.create',
    of: 'workflows.createWorkflow',
    write: true,
    send: (hd) => trpcMutation('workflows.createWorkflow', { name: unique(), steps: [TAG_STEP] }, hd),
  },
  {
    name: 'tRPC workflows.change',
    of: 'workflows.changeWorkflow',
    write: true,
    send: (hd, l) => trpcMutation('workflows.changeWorkflow', { id: workflowTarget(l), disabled: false }, hd),
  },
  { name: 'REST list intake pages', of: 'intakePages.listIntakePages', send: (hd) => restPages(hd, 'GET') },
  {
    name: 'REST create an intake page',
    of: 'intakePages.createIntakePage',
    write: true,
    send: (hd) => restPages(hd, 'POST', '', { name: unique() }),
  },
  {
    name: 'REST change an intake page',
    of: 'intakePages.changeIntakePage',
    write: true,
    send: (hd, l) => restPages(hd, 'PATCH', `/${pageTarget(l)}`, { title: 'Changed', welcome_text: 'Hello' }),
  },
  {
    name: 'tRPC intakePages.list',
    of: 'intakePages.listIntakePages',
    send: (hd) => trpcQuery('intakePages.listIntakePages', {}, hd),
  },
  {
    name: 'tRPC intakePages.create',
    of: 'intakePages.createIntakePage',
    write: true,
    send: (hd) => trpcMutation('intakePages.createIntakePage', { name: unique() }, hd),
  },
  {
    name: 'tRPC intakePages.change',
    of: 'intakePages.changeIntakePage',
    write: true,
    send: (hd, l) => trpcMutation('intakePages.changeIntakePage', { id: pageTarget(l), disabled: false }, hd),
  },
  {
    name: 'REST add_conversation_member',
    of: 'conversations.addConversationMember',
    write: true,
    send: (hd, l) =>
      restPost(
        hd,
        { slug: l === 'secret' ? SECRET.slug : 'no-such-slug', email: 'pat@pat.example', name: 'Pat' },
        'add_conversation_member',
      ),
  },
  {
    name: 'REST remove_conversation_member',
    of: 'conversations.removeConversationMember',
    write: true,
    send: (hd, l) =>
      restPost(
        hd,
        { slug: l === 'secret' ? SECRET.slug : 'no-such-slug', email: 'pat@pat.example' },
        'remove_conversation_member',
      ),
  },
  {
    name: 'tRPC conversations.addConversationMember',
    of: 'conversations.addConversationMember',
    write: true,
    send: (hd, l) =>
      trpcMutation(
        'conversations.addConversationMember',
        { slug: l === 'secret' ? SECRET.slug : 'no-such-slug', email: 'pat@pat.example', name: 'Pat' },
        hd,
      ),
  },
  {
    name: 'tRPC conversations.removeConversationMember',
    of: 'conversations.removeConversationMember',
    write: true,
    send: (hd, l) =>
      trpcMutation(
        'conversations.removeConversationMember',
        { slug: l === 'secret' ? SECRET.slug : 'no-such-slug', email: 'pat@pat.example' },
        hd,
      ),
  },
  {
    name: 'tRPC conversations.create through an intake page',
    of: 'conversations.createConversation',
    write: true,
    send: (hd, l) =>
      trpcMutation(
        'conversations.createConversation',
        { slug: unique(), intake_page_id: l === 'secret' ? a.secondaryPageId : 999_999 },
        hd,
      ),
  },
  {
    // Alpha's second conversation (the first is looked up by its title elsewhere here): its
    // settings, given again as they are, so every run of the matrix finds it alike.
    name: 'REST update_conversation',
    of: 'conversations.updateConversation',
    write: true,
    send: (hd, l) =>
      restPost(
        hd,
        { conversation_id: l === 'secret' ? aIds[1] : 2_000_000_000, allow_search_engines: true },
        'update_conversation',
      ),
  },
  {
    name: 'tRPC conversations.updateConversation',
    of: 'conversations.updateConversation',
    write: true,
    send: (hd, l) =>
      trpcMutation(
        'conversations.updateConversation',
        { conversation_id: l === 'secret' ? aIds[1] : 2_000_000_000, allow_search_engines: true },
        hd,
      ),
  },
  {
    // Alpha's own token deletes one conversation per transport; every other credential aims at
    // one that stays (deleteTarget), so what it is refused is a conversation that exists.
    name: 'REST delete_conversation',
    of: 'conversations.deleteConversation',
    write: true,
    send: (hd, l) => restPost(hd, { conversation_id: deleteTarget(hd, l, 'rest') }, 'delete_conversation'),
  },
  {
    name: 'tRPC conversations.deleteConversation',
    of: 'conversations.deleteConversation',
    write: true,
    send: (hd, l) =>
      trpcMutation('conversations.deleteConversation', { conversation_id: deleteTarget(hd, l, 'trpc') }, hd),
  },
  {
    name: 'REST get_team',
    of: 'team.getTeam',
    send: (hd) => apiCall(h, 'GET', '/team/get_team', hd),
  },
  {
    name: 'tRPC team.getTeam',
    of: 'team.getTeam',
    send: (hd) => trpcQuery('team.getTeam', {}, hd),
  },
  {
    name: 'REST update_team_member',
    of: 'team.updateTeamMember',
    write: true,
    send: (hd, l) => restAt('team')(hd, 'POST', '/update_team_member', teamChange(hd, l)),
  },
  {
    name: 'tRPC team.updateTeamMember',
    of: 'team.updateTeamMember',
    write: true,
    send: (hd, l) => trpcMutation('team.updateTeamMember', teamChange(hd, l), hd),
  },
  {
    name: 'REST get_messages of a conversation',
    of: 'messages.getMessages',
    send: (hd, l) =>
      apiCall(
        h,
        'GET',
        `/messages/get_messages?conversation_slug=${l === 'secret' ? SECRET.slug : 'no-such-slug'}`,
        hd,
      ),
  },
  {
    name: 'REST get_messages, all',
    of: 'messages.getMessages',
    send: (hd) => apiCall(h, 'GET', '/messages/get_messages', hd),
  },
  {
    name: 'tRPC messages.getMessages',
    of: 'messages.getMessages',
    send: (hd, l) =>
      trpcQuery('messages.getMessages', { conversation_slug: l === 'secret' ? SECRET.slug : 'no-such-slug' }, hd),
  },
  {
    name: 'REST create_message',
    of: 'messages.createMessage',
    write: true,
    send: (hd, l) =>
      apiCall(h, 'POST', '/messages/create_message', hd, {
        conversation_id: l === 'secret' ? aIds[0] : 2_000_000_000,
        text: 'Into the matrix',
      }),
  },
  {
    name: 'tRPC messages.createMessage',
    of: 'messages.createMessage',
    write: true,
    send: (hd, l) =>
      trpcMutation(
        'messages.createMessage',
        { conversation_id: l === 'secret' ? aIds[0] : 2_000_000_000, text: 'Into the matrix' },
        hd,
      ),
  },
  {
    name: 'REST list message templates',
    of: 'messageTemplates.listMessageTemplates',
    send: (hd) => restTemplates(hd, 'GET'),
  },
  {
    name: 'REST create a message template',
    of: 'messageTemplates.createMessageTemplate',
    write: true,
    send: (hd) => restTemplates(hd, 'POST', '', { name: unique(), text: 'Made in the matrix' }),
  },
  {
    name: 'REST change a message template',
    of: 'messageTemplates.updateMessageTemplate',
    write: true,
    send: (hd, l) => restTemplates(hd, 'PATCH', `/${templateTarget(hd, l, 'rest')}`, { text: 'Changed' }),
  },
  {
    name: 'REST delete a message template',
    of: 'messageTemplates.deleteMessageTemplate',
    write: true,
    send: (hd, l) => restTemplates(hd, 'DELETE', `/${templateTarget(hd, l, 'rest')}`),
  },
  {
    name: 'tRPC messageTemplates.listMessageTemplates',
    of: 'messageTemplates.listMessageTemplates',
    send: (hd) => trpcQuery('messageTemplates.listMessageTemplates', {}, hd),
  },
  {
    name: 'tRPC messageTemplates.createMessageTemplate',
    of: 'messageTemplates.createMessageTemplate',
    write: true,
    send: (hd) => trpcMutation('messageTemplates.createMessageTemplate', { name: unique(), text: 'Matrix' }, hd),
  },
  {
    name: 'tRPC messageTemplates.updateMessageTemplate',
    of: 'messageTemplates.updateMessageTemplate',
    write: true,
    send: (hd, l) =>
      trpcMutation('messageTemplates.updateMessageTemplate', { id: templateTarget(hd, l, 'trpc'), text: 'Hi' }, hd),
  },
  {
    name: 'tRPC messageTemplates.deleteMessageTemplate',
    of: 'messageTemplates.deleteMessageTemplate',
    write: true,
    send: (hd, l) => trpcMutation('messageTemplates.deleteMessageTemplate', { id: templateTarget(hd, l, 'trpc') }, hd),
  },
  {
    name: 'REST get_message_views',
    of: 'messages.getMessageViews',
    send: (hd, l) =>
      apiCall(h, 'GET', `/messages/get_message_views?message_id=${l === 'secret' ? alphaMessage : 2_000_000_000}`, hd),
  },
  {
    name: 'tRPC messages.getMessageViews',
    of: 'messages.getMessageViews',
    send: (hd, l) =>
      trpcQuery('messages.getMessageViews', { message_id: l === 'secret' ? alphaMessage : 2_000_000_000 }, hd),
  },
  ...(['add', 'remove'] as const).flatMap((verb): Operation[] => {
    const of = `messages.${verb}Reaction`;
    // As the credential's own owner: beta's token reaches for alpha's message as beta's owner.
    const input = (hd: Record<string, string>, l: 'secret' | 'absent') => ({
      message_id: l === 'secret' ? alphaMessage : 2_000_000_000,
      reaction: 'thumbs_up',
      user_email: `owner@${hd.authorization === `Bearer ${b.token}` ? b.key : a.key}.example.com`,
    });
    return [
      {
        name: `REST ${verb}_reaction`,
        of,
        write: true,
        send: (hd, l) => restPost(hd, input(hd, l), `../messages/${verb}_reaction`),
      },
      { name: `tRPC ${of}`, of, write: true, send: (hd, l) => trpcMutation(of, input(hd, l), hd) },
    ];
  }),
];

/** Each account's conversations, webhook endpoints, members and users, as `account:what:count`. */
const counts = async (): Promise<string[]> => {
  const rows = (await h.db.orm.em
    .fork()
    .getConnection()
    .execute(
      `select account_id, 'conversations' as what, count(*)::int as n from conversation group by account_id
       union all select account_id, 'webhooks', count(*)::int from webhook_endpoint group by account_id
       union all select account_id, 'members', count(*)::int from conversation_member group by account_id
       union all select account_id, 'users', count(*)::int from account_user group by account_id
       union all select account_id, 'messages', count(*)::int from message group by account_id
       union all select account_id, 'workflows ' || max(name) || ' ' || max(updated_at)::text, count(*)::int
                 from workflow group by account_id
       union all select account_id, 'intake pages ' || max(title) || ' ' || max(updated_at)::text, count(*)::int
                 from intake_page group by account_id
       union all select account_id, 'templates ' || max(text) || ' ' || max(updated_at)::text, count(*)::int
                 from message_template group by account_id
       order by 1, 2`,
    )) as { account_id: number; what: string; n: number }[];
  return rows.map((r) => `${r.account_id}:${r.what}:${r.n}`);
};
const alphaCounts = (all: string[]) => all.filter((c) => c.startsWith(`${a.id}:`));

/** What a response may differ in between two identical requests: ids, secrets and times of things it created. */
const comparable = (r: Call) =>
  JSON.stringify({ status: r.status, body: r.body })
    .replace(/matrix-\d+/g, 'matrix-N')
    .replace(/"id":\d+/g, '"id":N')
    .replace(/whsec_[A-Za-z0-9+/=]+/g, 'whsec_N')
    .replace(/"(created|updated)_at":"[^"]+"/g, '"$1_at":T')
    .replace(/"key":"matrix-\d+"/g, '"key":"matrix-N"');

/** The conversations a body holds, REST or tRPC, one or a page. */
const conversationIds = (body: any): number[] => {
  const data = body?.result?.data ?? body;
  if (Array.isArray(data?.conversations)) return data.conversations.map((c: { id: number }) => c.id);
  return typeof data?.id === 'number' && 'slug' in data ? [data.id] : [];
};

/** True when the body names anything of account alpha's: a conversation, its host, title or slug. */
const leaksAlpha = (r: Call) =>
  /alpha/i.test(JSON.stringify(r.body).replace(/matrix-\d+-alpha-private/g, '')) ||
  conversationIds(r.body).some((id) => aIds.includes(id));

const isUnauthorized = (r: Call) =>
  r.status === 401 && (r.body?.code === 'unauthorized' || r.body?.error?.data?.appCode === 'unauthorized');

describe('the matrix', () => {
  it('covers every operation appRouter serves, over REST and over tRPC', () => {
    for (const { path } of operations) {
      for (const transport of ['REST', 'tRPC']) {
        const covered = OPERATIONS.some((o) => o.of === path && o.name.startsWith(`${transport} `));
        expect(covered, `${transport} ${path} has no entry in OPERATIONS`).toBe(true);
      }
    }
    expect(OPERATIONS.filter((o) => !operations.some((op) => op.path === o.of))).toEqual([]);
  });
});

describe.each(OPERATIONS)('$name', (op) => {
  it('with the own token: reaches the own data', async () => {
    const r = await op.send(headersFor('own'), 'secret');
    expect(r.status).toBeLessThan(300);
  });

  it("with another account's token: nothing of the other account, exactly as if it did not exist", async () => {
    const before = await counts();
    const secret = await op.send(headersFor('other'), 'secret');
    const absent = await op.send(headersFor('other'), 'absent');
    expect(leaksAlpha(secret)).toBe(false);
    expect(comparable(secret)).toBe(comparable(absent));
    if (!op.write) expect(await counts()).toEqual(before);
    // alpha's own rows never move because of beta's calls
    expect(alphaCounts(await counts())).toEqual(alphaCounts(before));
  });

  it.each(['none', 'malformed', 'revoked'] as const)(
    'with %s credentials: 401, and nothing changes',
    async (credential) => {
      const before = await counts();
      for (let variant = 0; variant < (credential === 'malformed' ? MALFORMED.length : 1); variant++) {
        const r = await op.send(headersFor(credential, variant), 'secret');
        expect(isUnauthorized(r), `${credential} #${variant}: ${r.status} ${JSON.stringify(r.body)}`).toBe(true);
        expect(leaksAlpha(r)).toBe(false);
      }
      expect(await counts()).toEqual(before);
    },
  );
});

describe('paging across accounts', () => {
  it("never shows another account's conversations on any page", async () => {
    const own = await rest('get_conversations?page=2', headersFor('own'));
    expect(own.status).toBe(200);
    expect(own.body.conversations.length).toBeGreaterThanOrEqual(6);
    const other = await rest('get_conversations?page=1', headersFor('other'));
    expect(
      other.body.conversations.every((c: { conversation_url: string }) =>
        c.conversation_url.startsWith('https://beta.'),
      ),
    ).toBe(true);
    expect((await rest('get_conversations?page=2', headersFor('other'))).status).toBe(404);
  });
});
