import { Migration } from '@mikro-orm/migrations';

/**
 * Workflows hear of plays: a workflow event may be a message's played receipt (`played`), which a
 * step triggered by `message.played` answers once per message.
 */
export class Migration20261214100000_played_workflows extends Migration {
  override name = 'Migration20261214100000_played_workflows';

  override async up(): Promise<void> {
    this.addSql('alter table "workflow_event" add column "played" boolean not null default false;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "workflow_event" drop column "played";');
  }
}
