import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121043346_initial } from './Migration20261121043346_initial.ts';
import { Migration20261121065351_limits_and_idempotency } from './Migration20261121065351_limits_and_idempotency.ts';
import { Migration20261122100000_comparison_keys } from './Migration20261122100000_comparison_keys.ts';
import { Migration20261122200000_account_host } from './Migration20261122200000_account_host.ts';
import { Migration20261122300000_people } from './Migration20261122300000_people.ts';
import { Migration20261122400000_webhooks } from './Migration20261122400000_webhooks.ts';
import { Migration20261123000000_change_marks } from './Migration20261123000000_change_marks.ts';
import { Migration20261123100000_webhook_dispatch } from './Migration20261123100000_webhook_dispatch.ts';
import { Migration20261124000000_link_by_address } from './Migration20261124000000_link_by_address.ts';
import { Migration20261124100000_webhook_lanes } from './Migration20261124100000_webhook_lanes.ts';
import { Migration20261124200000_message_newlines } from './Migration20261124200000_message_newlines.ts';
import { Migration20261125000000_team_roles } from './Migration20261125000000_team_roles.ts';
import { Migration20261125100000_notifications } from './Migration20261125100000_notifications.ts';
import { Migration20261125200000_inbox } from './Migration20261125200000_inbox.ts';
import { Migration20261125300000_moderation } from './Migration20261125300000_moderation.ts';
import { Migration20261126000000_media } from './Migration20261126000000_media.ts';
import { Migration20261127000000_workflows } from './Migration20261127000000_workflows.ts';
import { Migration20261127100000_intake_pages } from './Migration20261127100000_intake_pages.ts';
import { Migration20261128000000_intake_welcome } from './Migration20261128000000_intake_welcome.ts';
import { Migration20261129000000_live_events } from './Migration20261129000000_live_events.ts';
import { Migration20261130000000_mail_due_order } from './Migration20261130000000_mail_due_order.ts';
import { Migration20261130100000_live_watch } from './Migration20261130100000_live_watch.ts';
import { Migration20261201000000_visitor_passes } from './Migration20261201000000_visitor_passes.ts';
import { Migration20261201100000_unconfirmed_starts } from './Migration20261201100000_unconfirmed_starts.ts';
import { Migration20261202000000_one_schema } from './Migration20261202000000_one_schema.ts';
import { Migration20261203000000_message_search } from './Migration20261203000000_message_search.ts';
import { Migration20261204000000_triage } from './Migration20261204000000_triage.ts';
import { Migration20261205000000_intake_title_pattern } from './Migration20261205000000_intake_title_pattern.ts';
import { Migration20261206000000_recording_posters } from './Migration20261206000000_recording_posters.ts';
import { Migration20261207000000_mail_html } from './Migration20261207000000_mail_html.ts';
import { Migration20261208000000_conversation_search } from './Migration20261208000000_conversation_search.ts';
import { Migration20261209000000_messages_resource } from './Migration20261209000000_messages_resource.ts';
import { Migration20261210000000_message_templates } from './Migration20261210000000_message_templates.ts';
import { Migration20261211000000_internal_notes } from './Migration20261211000000_internal_notes.ts';
import { Migration20261212000000_threads } from './Migration20261212000000_threads.ts';
import { Migration20261213000000_thread_replies } from './Migration20261213000000_thread_replies.ts';
import { Migration20261214000000_message_plays } from './Migration20261214000000_message_plays.ts';
import { Migration20261214100000_played_workflows } from './Migration20261214100000_played_workflows.ts';
import { Migration20261215000000_play_notices } from './Migration20261215000000_play_notices.ts';
import { Migration20261215100000_moments } from './Migration20261215100000_moments.ts';

/** Listed explicitly, in order: no folder scanning (which Deno and bundlers cannot rely on). */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121043346_initial', class: Migration20261121043346_initial },
  {
    name: 'Migration20261121065351_limits_and_idempotency',
    class: Migration20261121065351_limits_and_idempotency,
  },
  { name: 'Migration20261122100000_comparison_keys', class: Migration20261122100000_comparison_keys },
  { name: 'Migration20261122200000_account_host', class: Migration20261122200000_account_host },
  { name: 'Migration20261122300000_people', class: Migration20261122300000_people },
  { name: 'Migration20261122400000_webhooks', class: Migration20261122400000_webhooks },
  { name: 'Migration20261123000000_change_marks', class: Migration20261123000000_change_marks },
  { name: 'Migration20261123100000_webhook_dispatch', class: Migration20261123100000_webhook_dispatch },
  { name: 'Migration20261124000000_link_by_address', class: Migration20261124000000_link_by_address },
  { name: 'Migration20261124100000_webhook_lanes', class: Migration20261124100000_webhook_lanes },
  { name: 'Migration20261124200000_message_newlines', class: Migration20261124200000_message_newlines },
  { name: 'Migration20261125000000_team_roles', class: Migration20261125000000_team_roles },
  { name: 'Migration20261125100000_notifications', class: Migration20261125100000_notifications },
  { name: 'Migration20261125200000_inbox', class: Migration20261125200000_inbox },
  { name: 'Migration20261125300000_moderation', class: Migration20261125300000_moderation },
  { name: 'Migration20261126000000_media', class: Migration20261126000000_media },
  { name: 'Migration20261127000000_workflows', class: Migration20261127000000_workflows },
  { name: 'Migration20261127100000_intake_pages', class: Migration20261127100000_intake_pages },
  { name: 'Migration20261128000000_intake_welcome', class: Migration20261128000000_intake_welcome },
  { name: 'Migration20261129000000_live_events', class: Migration20261129000000_live_events },
  { name: 'Migration20261130000000_mail_due_order', class: Migration20261130000000_mail_due_order },
  { name: 'Migration20261130100000_live_watch', class: Migration20261130100000_live_watch },
  { name: 'Migration20261201000000_visitor_passes', class: Migration20261201000000_visitor_passes },
  { name: 'Migration20261201100000_unconfirmed_starts', class: Migration20261201100000_unconfirmed_starts },
  { name: 'Migration20261202000000_one_schema', class: Migration20261202000000_one_schema },
  { name: 'Migration20261203000000_message_search', class: Migration20261203000000_message_search },
  { name: 'Migration20261204000000_triage', class: Migration20261204000000_triage },
  { name: 'Migration20261205000000_intake_title_pattern', class: Migration20261205000000_intake_title_pattern },
  { name: 'Migration20261206000000_recording_posters', class: Migration20261206000000_recording_posters },
  { name: 'Migration20261207000000_mail_html', class: Migration20261207000000_mail_html },
  { name: 'Migration20261208000000_conversation_search', class: Migration20261208000000_conversation_search },
  { name: 'Migration20261209000000_messages_resource', class: Migration20261209000000_messages_resource },
  { name: 'Migration20261210000000_message_templates', class: Migration20261210000000_message_templates },
  { name: 'Migration20261211000000_internal_notes', class: Migration20261211000000_internal_notes },
  { name: 'Migration20261212000000_threads', class: Migration20261212000000_threads },
  { name: 'Migration20261213000000_thread_replies', class: Migration20261213000000_thread_replies },
  { name: 'Migration20261214000000_message_plays', class: Migration20261214000000_message_plays },
  { name: 'Migration20261214100000_played_workflows', class: Migration20261214100000_played_workflows },
  { name: 'Migration20261215000000_play_notices', class: Migration20261215000000_play_notices },
  { name: 'Migration20261215100000_moments', class: Migration20261215100000_moments },
];
