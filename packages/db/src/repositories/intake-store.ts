import {
  type IntakeStart,
  type IntakeStartResult,
  type IntakeStore,
  type PublicIntakePage,
  SlugTakenError,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sha256 } from '../tokens.ts';
import { markChangeSql } from './change-marks.ts';
import { type SettingsRow, settingsOf } from './conversation-reads.ts';
import { conversationRow, isSlugTaken } from './conversation-writes.ts';
import { type IntakePageRow, intakePageRecord } from './intake-page-store.ts';
import { notifySql } from './notification-store.ts';
import { type Prepared, runPrepared } from './prepared.ts';
import { fromJson, query, violatesUnique } from './sql.ts';

/*
 * Intake pages as visitors use them: the page (with what a start needs of its account), and one
 * statement per start.
 */

interface PageRow extends SettingsRow, IntakePageRow {
  version: string;
  welcome_id: number | null;
  welcome_kind: string | null;
  welcome_seconds: number | null;
  key: string;
  title: string;
  welcome_text: string;
  allow_anonymous: boolean;
  team_ids: unknown;
  title_template: string;
  owner_id: number | null;
  owner_email: string | null;
  owner_name: string | null;
}

/**
 * The enabled page of account `account` with key `key` (ignoring case; null: the primary one),
 * with its version: a digest of the whole row, which a start compares in its own statement.
 */
const pageSql = (account: string, key: string) => `
  select p.*, md5(p::text) as version from (
  select ip.id, ip.key, coalesce(nullif(ip.title, ''), ip.name) as title, ip.welcome_text, ip.allow_anonymous, ip.is_primary,
    w.id as workflow_id, w.name as workflow_name, w.steps as workflow_steps,
    wm.id as welcome_id, wm.message_type as welcome_kind, wm.recorded_duration_seconds as welcome_seconds,
    (select coalesce(json_agg(m.user_id order by m.user_id), '[]') from intake_page_member m
       where m.intake_page_id = ip.id and m.account_id = ip.account_id) as team_ids,
    a.default_anyone_can_post as anyone_can_post, a.default_allow_anonymous_messages as allow_anonymous_messages,
    a.default_allow_search_engines as allow_search_engines, a.title_template,
    u.id as owner_id, u.email as owner_email, u.name as owner_name
  from intake_page ip
  join account a on a.id = ip.account_id
  left join workflow w on w.id = ip.workflow_id and w.account_id = ip.account_id and w.disabled_at is null
  left join account_user u on u.id = a.owner_id
  left join message wm on wm.id = ip.welcome_message_id and wm.account_id = ip.account_id
    and wm.media_key is not null and wm.hidden_at is null
  where ip.account_id = ${account} and ip.disabled_at is null
    and case when ${key} is null then ip.is_primary else lower(ip.key) = lower(${key}) end
  limit 1) p`;

const PAGE: Prepared = { name: 'intake_page_public', text: pageSql('$1', '$2::text') };

/** Pages remembered at most this many (per process); past it the memory starts again. */
const RECENT_PAGES_MAX = 10_000;

const pageOf = (row: PageRow): PublicIntakePage => ({
  ...intakePageRecord(row),
  key: row.key,
  title: row.title,
  welcomeText: row.welcome_text,
  welcomeRecording:
    row.welcome_id === null
      ? null
      : { messageId: row.welcome_id, kind: row.welcome_kind ?? 'video', seconds: Number(row.welcome_seconds ?? 0) },
  allowAnonymous: row.allow_anonymous,
  teamIds: fromJson<number[]>(row.team_ids).map(Number),
  account: {
    titleTemplate: row.title_template,
    defaults: settingsOf(row),
    owner:
      row.owner_id === null ? null : { id: row.owner_id, email: row.owner_email ?? '', name: row.owner_name ?? '' },
  },
  version: row.version,
});

/** The parameters of a start after the conversation row's own (as the entity's builder numbers them). */
const START_PARAMS = [
  'account',
  'pageKey',
  'pageVersion',
  'email',
  'name',
  'text',
  'submitKey',
  'kind',
  'seconds',
  'mediaKey',
  'contentType',
  'bytes',
  'members',
  'workflow',
  'link',
  'linkSeconds',
  'returnPath',
  'subject',
  'body',
  'confirmed',
] as const;
type StartParam = (typeof START_PARAMS)[number];

let startSql: string | undefined;
let startPrepared: Prepared | undefined;

/**
 * One statement: the page as it is now (nothing is written unless it is as the start read it), the
 * visitor's person (a signed-in visitor's; an address typed into the form is looked up only to
 * refuse the team's), the conversation (as the entity's builder writes it, only when the form
 * token is new and the address is not the team's), its members (the page's team, and a signed-in
 * visitor), the first message (by the signed-in visitor; else anonymous, under the name given
 * while the address is unconfirmed), their webhook events in order, the notifications, the change
 * mark, the workflow's two events (created, then the message), and the sign-in link with its mail
 * (which puts the address's person's name on the message once confirmed). The last select says
 * what happened.
 */
function startStatement(em: EntityManager, accountId: number, s: IntakeStart) {
  const { sql, params } = conversationRow(em, accountId, s.conversation);
  if (!startPrepared) {
    const parsed = /^insert into "conversation" \(([^)]*)\) values \((.*)\) returning (.*)$/.exec(sql);
    if (!parsed) throw new Error(`unexpected conversation insert: ${sql}`);
    let n = 0;
    const values = (parsed[2] ?? '').replace(/\?/g, () => `$${++n}`);
    const p = (name: StartParam) => `$${n + START_PARAMS.indexOf(name) + 1}`;
    const account = `${p('account')}::int`;
    const email = `${p('email')}::text`;
    const subscribed = `w.account_id = ${account} and w.disabled_at is null and e.type = any(w.events)`;
    startSql = sql;
    startPrepared = {
      name: 'intake_start',
      text: `with page as (${pageSql(account, `${p('pageKey')}::text`)}),
        same_page as (select 1 from page where version = ${p('pageVersion')}::text),
        existing as (
          select id, team_role from account_user where account_id = ${account} and ${email} is not null and lower(email) = lower(${email})
        ),
        author as (select id, team_role from existing where ${p('confirmed')}::boolean),
        dup as (select conversation_id from message where account_id = ${account} and submit_key = ${p('submitKey')}::varchar),
        c as (
          insert into "conversation" (${parsed[1]}) select ${values}
          where exists (select 1 from same_page) and not exists (select 1 from dup)
            and not exists (select 1 from existing where team_role is not null)
            and (${email} is null or not ${p('confirmed')}::boolean or exists (select 1 from author))
          returning id, slug
        ),
        added as (
          insert into message (account_id, conversation_id, message_type, recorded_duration_seconds, author_id, anonymous,
                               claimed_name, text, submit_key, media_key, media_content_type, media_bytes)
          select ${account}, c.id, ${p('kind')}::varchar, ${p('seconds')}::int, (select id from author),
                 not exists (select 1 from author),
                 case when ${email} is not null and not ${p('confirmed')}::boolean then ${p('name')}::text end,
                 ${p('text')}::text, ${p('submitKey')}::varchar, ${p('mediaKey')}::varchar, ${p('contentType')}::varchar, ${p('bytes')}::bigint
          from c
          returning id, conversation_id, author_id
        ),
        m as (
          insert into conversation_member (conversation_id, user_id, account_id)
          select c.id, u.id, ${account} from c
          cross join (select unnest(${p('members')}::int[]) as id union select id from author) u
        ),
        webhook_ev as (
          insert into webhook_event (account_id, type, conversation_id, message_id)
          select ${account}, e.type, added.conversation_id, e.message_id
          from added cross join lateral (values (1, 'conversation_created', null::int), (2, 'message_created', added.id)) e(n, type, message_id)
          where exists (select 1 from webhook_endpoint w where ${subscribed})
          order by e.n
        ),
        ${notifySql({ source: 'added', account, conversation: 'added.conversation_id', message: 'added.id', author: 'added.author_id' })},
        ${markChangeSql({ source: 'c', account })},
        workflow_ev as (
          insert into workflow_event (account_id, conversation_id, message_id, author_id)
          select ${account}, added.conversation_id, e.message_id, e.author_id
          from added cross join lateral (values (1, null::int, null::int), (2, added.id, added.author_id)) e(n, message_id, author_id)
          where ${p('workflow')}::boolean
          order by e.n
        ),
        link as (
          insert into sign_in_link (account_id, email, name, token_hash, return_path, claim_message_id, expires_at)
          select ${account}, ${email}, ${p('name')}::text, ${p('link')}::varchar, ${p('returnPath')}::varchar,
                 case when ${p('confirmed')}::boolean then null else added.id end,
                 now() + make_interval(secs => ${p('linkSeconds')}::int)
          from added where ${p('link')}::varchar is not null
        ),
        mail as (
          insert into outgoing_mail (account_id, recipient, subject, body)
          select ${account}, ${email}, ${p('subject')}::varchar, ${p('body')}::text from added where ${p('link')}::varchar is not null
        )
        select (select id from added) as message_id, (select id from c) as conversation_id, (select slug from c) as slug,
               (select author_id from added) as author_id,
               (select conversation_id from dup limit 1) as dup_conversation,
               exists (select 1 from existing where team_role is not null) as team_address,
               not exists (select 1 from same_page) as page_changed`,
    };
  }
  // Every start names the same columns, so the statement's text never changes.
  if (sql !== startSql) throw new Error(`conversation insert changed shape: ${sql}`);
  const media = s.message.media;
  const given: Record<StartParam, unknown> = {
    account: accountId,
    pageKey: s.page.key,
    pageVersion: s.page.version,
    email: s.visitor?.email ?? null,
    name: s.visitor?.name ?? null,
    text: s.message.text,
    submitKey: s.message.submitKey,
    kind: media?.kind ?? 'text',
    seconds: media?.seconds ?? 0,
    mediaKey: media?.key ?? null,
    contentType: media?.contentType ?? null,
    bytes: media?.bytes ?? null,
    members: s.conversation.memberIds,
    workflow: s.conversation.workflow !== null,
    link: s.comeBack ? sha256(s.comeBack.token) : null,
    linkSeconds: s.comeBack?.ttlSeconds ?? 0,
    returnPath: s.comeBack?.returnPath ?? null,
    subject: s.comeBack?.mail.subject.slice(0, 255) ?? null,
    body: s.comeBack?.mail.text ?? null,
    confirmed: s.visitor?.confirmed ?? false,
  };
  return { statement: startPrepared, params: [...params, ...START_PARAMS.map((name) => given[name])] };
}

interface StartRow {
  message_id: number | null;
  author_id: number | null;
  conversation_id: number | null;
  slug: string | null;
  dup_conversation: number | null;
  team_address: boolean;
  page_changed: boolean;
}

/** A one-time code for an embed's frame; the expired ones go with each new one (few: one a start in a frame). */
const KEEP_PASS_CODE: Prepared = {
  name: 'pass_code_keep',
  text: `with old as (delete from pass_code where expires_at < now())
    insert into pass_code (code_hash, account_id, "grant", expires_at)
    values ($1, $2, $3, now() + make_interval(secs => $4::int))`,
};

/** Taken once: the delete that finds it is the only one that returns it. */
const TAKE_PASS_CODE: Prepared = {
  name: 'pass_code_take',
  text: 'delete from pass_code where code_hash = $1 and account_id = $2 and expires_at > now() returning "grant"',
};

/** A start's message, by its form token (a form sent twice). */
const MESSAGE_KEY_INDEX = 'message_account_submit_key';

/** Where a page read is remembered: by account and the key it was asked by (null: the primary page). */
const recentKey = (accountId: number, key: string | null) => `${accountId}:${key?.toLowerCase() ?? ''}`;

export class PgIntakeStore implements IntakeStore {
  private readonly em: EntityManager;
  /**
   * The pages as this process last read them, so that a start need not read its page first: the
   * start's statement compares the page's version and writes nothing if it changed.
   */
  private readonly recent = new Map<string, PublicIntakePage>();

  constructor(em: EntityManager) {
    this.em = em;
  }

  async page(accountId: number, key: string | null, options?: { recent?: boolean }): Promise<PublicIntakePage | null> {
    const known = options?.recent ? this.recent.get(recentKey(accountId, key)) : undefined;
    if (known) return known;
    const [row] = await runPrepared<PageRow>(this.em, PAGE, [accountId, key]);
    if (!row) {
      this.recent.delete(recentKey(accountId, key));
      return null;
    }
    const page = pageOf(row);
    if (this.recent.size >= RECENT_PAGES_MAX) this.recent.clear();
    this.recent.set(recentKey(accountId, key), page);
    return page;
  }

  async start(accountId: number, s: IntakeStart): Promise<IntakeStartResult> {
    const { statement, params } = startStatement(this.em, accountId, s);
    let row: StartRow | undefined;
    try {
      [row] = await runPrepared<StartRow>(this.em, statement, params);
    } catch (e) {
      if (isSlugTaken(e)) throw new SlugTakenError();
      // The same form sent twice at once: the other one started it.
      if (violatesUnique(e, MESSAGE_KEY_INDEX) && s.message.submitKey) return this.again(accountId, s);
      throw e;
    }
    if (!row) throw new Error('the intake start returned no row');
    if (row.team_address) return { kind: 'team_address' };
    if (row.dup_conversation !== null) return this.again(accountId, s);
    if (row.page_changed) return { kind: 'page_changed' };
    if (row.message_id === null || row.conversation_id === null || row.slug === null) {
      // Only a signed-in visitor's start needs their person, whose session found them.
      throw new Error('the intake start found no person for the signed-in visitor');
    }
    return {
      kind: 'started',
      conversationId: Number(row.conversation_id),
      slug: row.slug,
      messageId: Number(row.message_id),
      authorId: row.author_id === null ? null : Number(row.author_id),
      created: true,
      startedAt: Date.now(),
    };
  }

  async keepPassCode(accountId: number, codeHash: string, grant: string, ttlSeconds: number): Promise<void> {
    await runPrepared(this.em, KEEP_PASS_CODE, [codeHash, accountId, grant, ttlSeconds]);
  }

  async takePassCode(accountId: number, codeHash: string): Promise<string | null> {
    const [row] = await runPrepared<{ grant: string }>(this.em, TAKE_PASS_CODE, [codeHash, accountId]);
    return row?.grant ?? null;
  }

  /**
   * A form token already used: the conversation it started (the site lets this device's pass open
   * it too). A token of anything but a start (a reply's) starts nothing and opens nothing.
   */
  private async again(accountId: number, s: IntakeStart): Promise<IntakeStartResult> {
    const [row] = await query<{
      id: number;
      conversation_id: number;
      slug: string;
      author_id: number | null;
      started_ms: string;
    }>(
      this.em,
      `select m.id, m.conversation_id, c.slug, m.author_id, (extract(epoch from m.created_at) * 1000)::bigint::text as started_ms
       from message m join conversation c on c.id = m.conversation_id
       where m.account_id = ? and m.submit_key = ? and (c.via_primary_intake_page or c.intake_page_id is not null)
         and not exists (select 1 from message e where e.conversation_id = m.conversation_id and e.id < m.id)`,
      [accountId, s.message.submitKey],
    );
    if (!row) return { kind: 'form_used' };
    return {
      kind: 'started',
      conversationId: row.conversation_id,
      slug: row.slug,
      messageId: row.id,
      authorId: row.author_id,
      created: false,
      startedAt: Number(row.started_ms),
    };
  }
}
