import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook deliveries are claimed endpoint by endpoint (each endpoint's oldest due ones), so that
 * one endpoint that never answers holds back only its own deliveries: the pending ones are indexed
 * by endpoint.
 */
export class Migration20261124100000_webhook_lanes extends Migration {
  override name = 'Migration20261124100000_webhook_lanes';

  override async up(): Promise<void> {
    this.addSql(
      `create index "webhook_delivery_endpoint_pending" on "webhook_delivery" ("endpoint_id", "id") where "status" = 'pending';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_delivery_endpoint_pending";`);
  }
}
