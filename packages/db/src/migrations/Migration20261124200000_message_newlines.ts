import { Migration } from '@mikro-orm/migrations';

/**
 * Line breaks in messages are stored as `\n`: replies posted from a form before this came with
 * the `\r\n` browsers send, and the API answered them as sent. The accounts whose messages change
 * get a new change mark, so no client keeps an answer (ETag) with the old text.
 */
export class Migration20261124200000_message_newlines extends Migration {
  override name = 'Migration20261124200000_message_newlines';

  override async up(): Promise<void> {
    this.addSql(`
      with changed as (
        update "message" set "text" = replace(replace("text", E'\\r\\n', E'\\n'), E'\\r', E'\\n')
        where "text" like E'%\\r%'
        returning "account_id"
      )
      insert into "account_change" as m ("account_id", "shard", "seq")
      select distinct "account_id", 0, 1 from changed
      on conflict ("account_id", "shard") do update set "seq" = m."seq" + 1;`);
  }

  override async down(): Promise<void> {
    // Nothing to restore: which breaks were \r\n is not kept, and \n reads the same.
  }
}
