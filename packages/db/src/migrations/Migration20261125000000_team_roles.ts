import { Migration } from '@mikro-orm/migrations';

/**
 * An account's team: the users given a role (`owner`, `admin`, `member`); everyone else who takes
 * part is a participant (null). The accounts' owners become the team's owners. People who wrote a
 * message join its conversation (the rule for every post from now on), so a private conversation's
 * author can read it; the accounts whose member lists change get a new change mark.
 */
export class Migration20261125000000_team_roles extends Migration {
  override name = 'Migration20261125000000_team_roles';

  override async up(): Promise<void> {
    this.addSql(
      `alter table "account_user" add column "team_role" varchar(16) null, add constraint "account_user_team_role_check" check ("team_role" in ('owner', 'admin', 'member'));`,
    );
    this.addSql(`update "account_user" u set "team_role" = 'owner' from "account" a where a."owner_id" = u."id";`);
    this.addSql(`create index "account_user_team" on "account_user" ("account_id") where "team_role" is not null;`);
    this.addSql(`
      with joined as (
        insert into "conversation_member" ("conversation_id", "user_id", "account_id")
        select distinct m."conversation_id", m."author_id", m."account_id" from "message" m
        where m."author_id" is not null
        on conflict do nothing
        returning "account_id"
      )
      insert into "account_change" as m ("account_id", "shard", "seq")
      select distinct "account_id", 0, 1 from joined
      on conflict ("account_id", "shard") do update set "seq" = m."seq" + 1;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "account_user_team";`);
    this.addSql(`alter table "account_user" drop constraint "account_user_team_role_check", drop column "team_role";`);
  }
}
