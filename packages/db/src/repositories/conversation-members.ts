import type { MemberChange, MemberStore } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { sql } from 'kysely';
import { changeMark } from './change-marks.ts';
import { slugKey } from './conversation-reads.ts';
import { db, run, sameAddress, slot, statement } from './query.ts';

/*
 * A conversation's members changed by the team or the API, each change one statement with the
 * account's change mark (moved only when the members did). Its slots: the account, the slug's
 * key, the person's e-mail address (and, to add, the name a new person is given).
 */

const account = () => slot<number>('account');

/** The conversation by its slug's key. */
const conversation = () =>
  db
    .selectFrom('conversation')
    .select(['id', 'title', 'slug'])
    .where('account_id', '=', account())
    .where(slugKey('slug'), '=', slot<string>('slug'));

/** The person of the address, if the account has one. */
const known = () =>
  db
    .selectFrom('account_user')
    .select(['id', 'email'])
    .where('account_id', '=', account())
    .where(sameAddress('email', slot<string>('email')));

/** What each change answers beside the conversation: the person, and whether the members changed. */
const answer = (person: 'person' | 'known', changed: 'joined' | 'gone') => [
  sql<number | null>`(select id from ${sql.table(person)} limit 1)`.as('user_id'),
  sql<string | null>`(select email from ${sql.table(person)} limit 1)`.as('email'),
  sql<boolean>`exists (select 1 from ${sql.table(changed)})`.as('changed'),
];

/** Adds the address's user, made with the given name when the address is nobody's (and a name is given). */
const ADD = statement(
  'conversation_member_add',
  db
    .with('c', () => conversation())
    .with('known', () => known())
    .with('made', (q) =>
      q
        .insertInto('account_user')
        .columns(['account_id', 'email', 'name'])
        .expression(
          q
            .selectNoFrom([
              account().as('account_id'),
              slot<string>('email').as('email'),
              sql<string>`${slot('name')}::text`.as('name'),
            ])
            .where((eb) => eb.exists(eb.selectFrom('c').select('c.id')))
            .where((eb) => eb.not(eb.exists(eb.selectFrom('known').select('known.id'))))
            .where(sql<boolean>`${slot('name')}::text is not null`),
        )
        .onConflict((c) => c.doNothing())
        .returning(['id', 'email']),
    )
    .with('person', (q) =>
      q
        .selectFrom('known')
        .select(['id', 'email'])
        .unionAll(q.selectFrom('made').select(['id', 'email'])),
    )
    .with('joined', (q) =>
      q
        .insertInto('conversation_member')
        .columns(['conversation_id', 'user_id', 'account_id'])
        .expression(q.selectFrom(['c', 'person']).select(['c.id', 'person.id as user_id', account().as('account_id')]))
        .onConflict((c) => c.doNothing())
        .returning('user_id'),
    )
    .with('change_mark', () => changeMark('joined', account()))
    .selectFrom('c')
    .select(['c.id', 'c.title', 'c.slug'])
    .select(answer('person', 'joined')),
);

const REMOVE = statement(
  'conversation_member_remove',
  db
    .with('c', () => conversation())
    .with('known', () => known())
    .with('gone', (q) =>
      q
        .deleteFrom('conversation_member')
        .where('conversation_id', '=', (eb) => eb.selectFrom('c').select('c.id'))
        .where('user_id', '=', (eb) => eb.selectFrom('known').select('known.id'))
        .where('account_id', '=', account())
        .returning('user_id'),
    )
    .with('change_mark', () => changeMark('gone', account()))
    .selectFrom('c')
    .select(['c.id', 'c.title', 'c.slug'])
    .select(answer('known', 'gone')),
);

/** Ends the access of the devices that started it: passes issued until now open it no more. */
const END_PASSES = statement(
  'conversation_end_passes',
  db
    .updateTable('conversation')
    .set({ passes_valid_after: sql<Date>`now()` })
    .where('account_id', '=', account())
    .where('id', '=', slot<number>('conversation')),
);

const change = (
  row:
    | { id: number; title: string; slug: string; user_id: number | null; email: string | null; changed: boolean }
    | undefined,
): MemberChange | null =>
  row
    ? {
        conversationId: row.id,
        title: row.title,
        slug: row.slug,
        person: row.user_id === null ? null : { id: row.user_id, email: row.email ?? '' },
        changed: row.changed,
      }
    : null;

/** The domain's MemberStore on MikroORM's connection. */
export const memberStore = (em: EntityManager): MemberStore => ({
  addConversationMember: async (accountId, slugKeyOf, person) => {
    const [row] = await run(em, ADD, { account: accountId, slug: slugKeyOf, email: person.email, name: person.name });
    return change(row);
  },
  removeConversationMember: async (accountId, slugKeyOf, email) => {
    const [row] = await run(em, REMOVE, { account: accountId, slug: slugKeyOf, email });
    return change(row);
  },
  endPasses: async (accountId, conversationId) => {
    await run(em, END_PASSES, { account: accountId, conversation: conversationId });
  },
});
