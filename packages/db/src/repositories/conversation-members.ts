import { type MemberChange, type MemberStore, SLUG_KEY_SQL } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import { markChangeSql } from './change-marks.ts';
import { type Prepared, runPrepared } from './prepared.ts';

/*
 * A conversation's members changed by the team or the API, each change one statement with the
 * account's change mark (moved only when the members did). $1 account, $2 the slug's key, $3 the
 * person's e-mail address.
 */

const CONVERSATION = `c as (select id, title, slug from conversation where account_id = $1 and ${SLUG_KEY_SQL('slug')} = $2)`;
const PERSON = 'known as (select id, email from account_user where account_id = $1 and lower(email) = lower($3))';

/** Adds the address's user, made with the name $4 when the address is nobody's (and $4 is given). */
const ADD: Prepared = {
  name: 'conversation_member_add',
  text: `
  with ${CONVERSATION}, ${PERSON},
  made as (
    insert into account_user (account_id, email, name)
    select $1, $3, $4::text where exists (select 1 from c) and not exists (select 1 from known) and $4::text is not null
    on conflict do nothing
    returning id, email
  ),
  person as (select id, email from known union all select id, email from made),
  joined as (
    insert into conversation_member (conversation_id, user_id, account_id)
    select c.id, person.id, $1 from c, person
    on conflict do nothing
    returning user_id
  ),
  ${markChangeSql({ source: 'joined', account: '$1::int' })}
  select c.id, c.title, c.slug, (select id from person limit 1) as user_id, (select email from person limit 1) as email,
    exists (select 1 from joined) as changed
  from c`,
};

const REMOVE: Prepared = {
  name: 'conversation_member_remove',
  text: `
  with ${CONVERSATION}, ${PERSON},
  gone as (
    delete from conversation_member cm using c, known
    where cm.account_id = $1 and cm.conversation_id = c.id and cm.user_id = known.id
    returning cm.user_id
  ),
  ${markChangeSql({ source: 'gone', account: '$1::int' })}
  select c.id, c.title, c.slug, (select id from known) as user_id, (select email from known) as email,
    exists (select 1 from gone) as changed
  from c`,
};

interface MemberChangeRow {
  id: number;
  title: string;
  slug: string;
  user_id: number | null;
  email: string | null;
  changed: boolean;
}

const change = (row: MemberChangeRow | undefined): MemberChange | null =>
  row
    ? {
        conversationId: row.id,
        title: row.title,
        slug: row.slug,
        person: row.user_id === null ? null : { id: row.user_id, email: row.email ?? '' },
        changed: row.changed,
      }
    : null;

async function addConversationMember(
  em: EntityManager,
  accountId: number,
  slugKey: string,
  person: { email: string; name: string | null },
): Promise<MemberChange | null> {
  const [row] = await runPrepared<MemberChangeRow>(em, ADD, [accountId, slugKey, person.email, person.name]);
  return change(row);
}

async function removeConversationMember(
  em: EntityManager,
  accountId: number,
  slugKey: string,
  email: string,
): Promise<MemberChange | null> {
  const [row] = await runPrepared<MemberChangeRow>(em, REMOVE, [accountId, slugKey, email]);
  return change(row);
}

/** Ends the access of the devices that started it: passes issued until now open it no more. */
const END_PASSES: Prepared = {
  name: 'conversation_end_passes',
  text: 'update conversation set passes_valid_after = now() where account_id = $1 and id = $2',
};

/** The domain's MemberStore on MikroORM's connection. */
export const memberStore = (em: EntityManager): MemberStore => ({
  addConversationMember: (accountId, slugKey, person) => addConversationMember(em, accountId, slugKey, person),
  removeConversationMember: (accountId, slugKey, email) => removeConversationMember(em, accountId, slugKey, email),
  endPasses: async (accountId, conversationId) => {
    await runPrepared(em, END_PASSES, [accountId, conversationId]);
  },
});
