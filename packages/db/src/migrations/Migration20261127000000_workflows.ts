import { Migration } from '@mikro-orm/migrations';

/**
 * Workflows that run. A workflow's steps now have a form (the domain's workflows.ts); a workflow
 * saved before, whose steps have none, is disabled (kept, copied onto nothing) until changed. A
 * conversation's copy holds each step with its state; a copy made before keeps its steps as
 * `original`, skipped. Work is two tables: `workflow_event` (a conversation with a workflow was
 * created or got a message, written in that same statement) which the runner expands into
 * `workflow_job` rows, one per step and occurrence under a unique key, each run at most once
 * from its due time. A message a step posted names its job (unique), so it is never posted twice.
 */
export class Migration20261127000000_workflows extends Migration {
  override name = 'Migration20261127000000_workflows';

  override async up(): Promise<void> {
    this.addSql(
      `alter table "workflow" add column "updated_at" timestamptz(6) not null default now(), add column "disabled_at" timestamptz(6) null;`,
    );
    this.addSql(`update "workflow" set "disabled_at" = now() where not coalesce((
        select bool_and(jsonb_typeof(s -> 'trigger') = 'object' and jsonb_typeof(s -> 'action') = 'object')
        from jsonb_array_elements(case when jsonb_typeof("steps") = 'array' then "steps" else '[]' end) s), false);`);
    this.addSql(`update "conversation" set "workflow" = jsonb_set("workflow", '{steps}', coalesce((
        select jsonb_agg(jsonb_build_object('trigger', null, 'action', null, 'state', 'skipped', 'due_at', null,
          'done_at', null, 'error', 'copied from elsewhere; this server does not run it', 'runs', 0, 'original', s) order by i)
        from jsonb_array_elements(case when jsonb_typeof("workflow" -> 'steps') = 'array' then "workflow" -> 'steps' else '[]' end)
          with ordinality as t(s, i)), '[]'))
      where "workflow" is not null;`);
    this.addSql(`create table "workflow_event" (
      "id" bigserial primary key,
      "account_id" int not null references "account" ("id") on delete cascade,
      "conversation_id" int not null references "conversation" ("id") on delete cascade,
      "message_id" int null,
      "author_id" int null,
      "created_at" timestamptz(6) not null default now());`);
    this.addSql(`create table "workflow_job" (
      "id" serial primary key,
      "account_id" int not null references "account" ("id") on delete cascade,
      "conversation_id" int not null references "conversation" ("id") on delete cascade,
      "step" smallint not null,
      "occurrence" varchar(40) not null,
      "message_id" int null,
      "due_at" timestamptz(6) not null,
      "state" varchar(16) not null default 'pending',
      "attempts" int not null default 0,
      "last_error" text null,
      "done_at" timestamptz(6) null,
      "created_at" timestamptz(6) not null default now(),
      constraint "workflow_job_state_known" check ("state" in ('pending', 'done', 'failed', 'skipped')));`);
    this.addSql(
      `create unique index "workflow_job_once" on "workflow_job" ("conversation_id", "step", "occurrence");`,
    );
    this.addSql(`create index "workflow_job_due" on "workflow_job" ("due_at") where "state" = 'pending';`);
    this.addSql(`alter table "message" add column "workflow_job_id" int null;`);
    this.addSql(
      `create unique index "message_workflow_job" on "message" ("workflow_job_id") where "workflow_job_id" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "message_workflow_job";`);
    this.addSql(`alter table "message" drop column "workflow_job_id";`);
    this.addSql(`drop table "workflow_job";`);
    this.addSql(`drop table "workflow_event";`);
    this.addSql(`alter table "workflow" drop column "disabled_at", drop column "updated_at";`);
  }
}
