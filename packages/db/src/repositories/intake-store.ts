import {
  type IntakeStart,
  type IntakeStartResult,
  type IntakeStore,
  type PublicIntakePage,
  SlugTakenError,
} from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { type InferResult, sql } from 'kysely';
import { ACCOUNT_DEFAULTS } from './account-store.ts';
import { changeMark } from './change-marks.ts';
import { settingsOf } from './conversation-reads.ts';
import { conversationArgs, insertConversationWhere, isSlugTaken } from './conversation-writes.ts';
import { enabledPages, intakePageRecord } from './intake-page-store.ts';
import { notifyEvents } from './notification-store.ts';
import { column, db, type RowOf, run, sameAddress, slot, statement } from './query.ts';
import { violatesUnique } from './sql.ts';
import { webhookEvents } from './webhook-outbox.ts';
import { workflowEvents } from './workflow-jobs.ts';

/*
 * Intake pages as visitors use them: the page (with what a start needs of its account), and one
 * statement per start.
 */

const account = () => slot<number>('account');
const accountInt = () => sql<number>`${account()}::int`;

/**
 * The enabled page of the run's account with the key `pageKey` (ignoring case; null: the primary
 * one), with what a start needs of its account, and its version: a digest of the whole row, which
 * a start compares in its own statement.
 */
const publicPage = () => {
  const key = sql<string | null>`${slot('pageKey')}::text`;
  const page = enabledPages()
    .innerJoin('account as a', 'a.id', 'ip.account_id')
    .leftJoin('account_user as u', 'u.id', 'a.owner_id')
    .leftJoin('message as wm', (j) =>
      j
        .onRef('wm.id', '=', 'ip.welcome_message_id')
        .onRef('wm.account_id', '=', 'ip.account_id')
        .on('wm.media_key', 'is not', null)
        .on('wm.hidden_at', 'is', null),
    )
    .select((eb) => [
      'ip.key',
      sql<string>`coalesce(nullif(ip.title, ''), ip.name)`.as('title'),
      'ip.welcome_text',
      'ip.name',
      'ip.conversation_title',
      'ip.allow_anonymous',
      'wm.id as welcome_id',
      'wm.message_type as welcome_kind',
      'wm.recorded_duration_seconds as welcome_seconds',
      eb
        .selectFrom('intake_page_member as m')
        .select(sql<number[]>`coalesce(json_agg(m.user_id order by m.user_id), '[]')`.as('ids'))
        .whereRef('m.intake_page_id', '=', 'ip.id')
        .whereRef('m.account_id', '=', 'ip.account_id')
        .as('team_ids'),
      ...ACCOUNT_DEFAULTS,
    ])
    .where(sql<boolean>`case when ${key} is null then ip.is_primary else lower(ip.key) = lower(${key}) end`)
    .limit(1);
  return db.selectFrom(page.as('p')).selectAll('p').select(sql<string>`md5(p::text)`.as('version'));
};

const PAGE = statement('intake_page_public', publicPage());

type PageRow = InferResult<ReturnType<typeof publicPage>>[number];

/** Pages remembered at most this many (per process); past it the memory starts again. */
const RECENT_PAGES_MAX = 10_000;

const pageOf = (row: PageRow): PublicIntakePage => ({
  ...intakePageRecord(row),
  key: row.key,
  title: row.title,
  welcomeText: row.welcome_text,
  name: row.name,
  conversationTitle: row.conversation_title,
  welcomeRecording:
    row.welcome_id === null
      ? null
      : { messageId: row.welcome_id, kind: row.welcome_kind ?? 'video', seconds: Number(row.welcome_seconds ?? 0) },
  allowAnonymous: row.allow_anonymous,
  teamIds: (row.team_ids ?? []).map(Number),
  account: {
    titleTemplate: row.title_template,
    defaults: settingsOf(row),
    owner:
      row.owner_id === null ? null : { id: row.owner_id, email: row.owner_email ?? '', name: row.owner_name ?? '' },
  },
  version: row.version,
});

const email = () => sql<string | null>`${slot('email')}::text`;
const confirmed = () => sql<boolean>`${slot('confirmed')}::boolean`;

/**
 * One statement: the page as it is now (nothing is written unless it is as the start read it), the
 * visitor's person (a signed-in visitor's; an address typed into the form is looked up only to
 * refuse the team's), the conversation (only when the form token is new and the address is not
 * the team's), its members (the page's team, and a signed-in visitor), the first message (by the
 * signed-in visitor; else anonymous, under the name given while the address is unconfirmed), their
 * webhook events in order, the notifications (the message's event carries the address to mail a
 * link back to, which the notification round makes after the answer), the change mark, and the
 * workflow's two events (created, then the message). The last select says what happened.
 */
const START = statement(
  'intake_start',
  db
    .with('page', () => publicPage())
    .with('same_page', (q) =>
      q
        .selectFrom('page')
        .select(sql<number>`1`.as('one'))
        .where('version', '=', sql<string>`${slot('pageVersion')}::text`),
    )
    .with('existing', () =>
      db
        .selectFrom('account_user')
        .select(['id', 'team_role'])
        .where('account_id', '=', account())
        .where(sql<boolean>`${email()} is not null`)
        .where(sameAddress('email', email())),
    )
    .with('author', (q) => q.selectFrom('existing').select(['id', 'team_role']).where(confirmed()))
    .with('dup', () =>
      db
        .selectFrom('message')
        .select('conversation_id')
        .where('account_id', '=', account())
        .where('submit_key', '=', sql<string>`${slot('submitKey')}::varchar`),
    )
    .with('c', () =>
      insertConversationWhere(
        sql<boolean>`exists (select 1 from same_page) and not exists (select 1 from dup)
          and not exists (select 1 from existing where team_role is not null)
          and (${email()} is null or not ${confirmed()} or exists (select 1 from author))`,
      ).returning(['id', 'slug']),
    )
    .with('added', (q) =>
      q
        .insertInto('message')
        .columns([
          'account_id',
          'conversation_id',
          'message_type',
          'recorded_duration_seconds',
          'author_id',
          'anonymous',
          'claimed_name',
          'text',
          'submit_key',
          'media_key',
          'media_content_type',
          'media_bytes',
          'poster',
        ])
        .expression(
          q
            .selectFrom('c')
            .select([
              accountInt().as('account_id'),
              'c.id',
              sql<string>`${slot('kind')}::varchar`.as('message_type'),
              sql<number>`${slot('seconds')}::int`.as('recorded_duration_seconds'),
              sql<number | null>`(select id from author)`.as('author_id'),
              sql<boolean>`not exists (select 1 from author)`.as('anonymous'),
              sql<
                string | null
              >`case when ${email()} is not null and not ${confirmed()} then ${slot('name')}::text end`.as(
                'claimed_name',
              ),
              sql<string>`${slot('text')}::text`.as('text'),
              sql<string | null>`${slot('submitKey')}::varchar`.as('submit_key'),
              sql<string | null>`${slot('mediaKey')}::varchar`.as('media_key'),
              sql<string | null>`${slot('contentType')}::varchar`.as('media_content_type'),
              sql<number | null>`${slot('bytes')}::bigint`.as('media_bytes'),
              sql<boolean>`${slot('poster')}::boolean`.as('poster'),
            ]),
        )
        .returning(['id', 'conversation_id', 'author_id']),
    )
    .with('m', (q) =>
      q
        .insertInto('conversation_member')
        .columns(['conversation_id', 'user_id', 'account_id'])
        .expression(
          q
            .selectFrom('c')
            .crossJoin(
              sql<{ id: number }>`(select unnest(${slot('members')}::int[]) as id union select id from author)`.as('u'),
            )
            .select(['c.id', column<number>('u.id').as('user_id'), accountInt().as('account_id')]),
        ),
    )
    .with('webhook_ev', () =>
      webhookEvents(
        'added',
        accountInt(),
        { type: 'conversation_created', conversation: column('added.conversation_id'), message: sql<null>`null::int` },
        { type: 'message_created', conversation: column('added.conversation_id'), message: column('added.id') },
      ),
    )
    .with('notify_ev', () =>
      notifyEvents('added', {
        account: accountInt(),
        conversation: column('added.conversation_id'),
        message: column('added.id'),
        author: column('added.author_id'),
        // An address nobody confirmed is mailed a link back (null: no address, or signed in).
        comeBack: sql<string | null>`case when not ${confirmed()} then ${email()} end`,
      }),
    )
    .with('change_mark', () => changeMark('c', accountInt()))
    .with('workflow_ev', () =>
      workflowEvents(
        'added',
        {
          account: accountInt(),
          conversation: column('added.conversation_id'),
          when: sql<boolean>`${slot('hasWorkflow')}::boolean`,
        },
        { message: sql<null>`null::int`, author: sql<null>`null::int` },
        { message: column('added.id'), author: column('added.author_id') },
      ),
    )
    .selectNoFrom([
      sql<number | null>`(select id from added)`.as('message_id'),
      sql<number | null>`(select id from c)`.as('conversation_id'),
      sql<string | null>`(select slug from c)`.as('slug'),
      sql<number | null>`(select author_id from added)`.as('author_id'),
      sql<number | null>`(select conversation_id from dup limit 1)`.as('dup_conversation'),
      sql<boolean>`exists (select 1 from existing where team_role is not null)`.as('team_address'),
      sql<boolean>`not exists (select 1 from same_page)`.as('page_changed'),
    ]),
);

/** What fills a start's slots. */
function startArgs(accountId: number, s: IntakeStart) {
  const media = s.message.media;
  return {
    ...conversationArgs(accountId, s.conversation),
    firstText: s.message.text,
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
    poster: media?.poster === true,
    confirmed: s.visitor?.confirmed ?? false,
  };
}

/** A one-time code for an embed's frame; the expired ones go with each new one (few: one a start in a frame). */
const KEEP_PASS_CODE = statement(
  'pass_code_keep',
  db
    .with('old', (q) => q.deleteFrom('pass_code').where('expires_at', '<', sql<Date>`now()`))
    .insertInto('pass_code')
    .values({
      code_hash: slot<string>('codeHash'),
      account_id: account(),
      grant: slot<string>('grant'),
      expires_at: sql<Date>`now() + make_interval(secs => ${slot('ttlSeconds')}::int)`,
    }),
);

/** Taken once: the delete that finds it is the only one that returns it. */
const TAKE_PASS_CODE = statement(
  'pass_code_take',
  db
    .deleteFrom('pass_code')
    .where('code_hash', '=', slot<string>('codeHash'))
    .where('account_id', '=', account())
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('grant'),
);

/**
 * A form token's first message in a conversation an intake page started (a token of anything but
 * a start, a reply's, starts nothing and opens nothing).
 */
const STARTED_BY = statement(
  'intake_started_by',
  db
    .selectFrom('message as m')
    .innerJoin('conversation as c', 'c.id', 'm.conversation_id')
    .select([
      'm.id',
      'm.conversation_id',
      'c.slug',
      'm.author_id',
      sql<string>`(extract(epoch from m.created_at) * 1000)::bigint::text`.as('started_ms'),
    ])
    .where('m.account_id', '=', account())
    .where('m.submit_key', '=', slot<string>('submitKey'))
    .where((eb) => eb.or([eb.ref('c.via_primary_intake_page'), eb('c.intake_page_id', 'is not', null)]))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('message as e')
            .select('e.id')
            .whereRef('e.conversation_id', '=', 'm.conversation_id')
            .whereRef('e.id', '<', 'm.id'),
        ),
      ),
    ),
);

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
    const [row] = await run(this.em, PAGE, { account: accountId, pageKey: key });
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
    let row: RowOf<typeof START> | undefined;
    try {
      [row] = await run(this.em, START, startArgs(accountId, s));
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
    await run(this.em, KEEP_PASS_CODE, { codeHash, account: accountId, grant, ttlSeconds });
  }

  async takePassCode(accountId: number, codeHash: string): Promise<string | null> {
    const [row] = await run(this.em, TAKE_PASS_CODE, { codeHash, account: accountId });
    return row?.grant ?? null;
  }

  /** A form token already used: the conversation it started (the site lets this device's pass open it too). */
  private async again(accountId: number, s: IntakeStart): Promise<IntakeStartResult> {
    const [row] = await run(this.em, STARTED_BY, { account: accountId, submitKey: s.message.submitKey });
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
