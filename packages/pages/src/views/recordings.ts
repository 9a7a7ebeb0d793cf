import { clockTime, type TeamRecording } from '@convo/domain';
import { html } from 'hono/html';
import { KIND_NAMES } from './conversation.ts';
import type { Html } from './layout.ts';

/**
 * A choice of the team's recordings (an intake page's welcome, a workflow's message, a template's):
 * "None", then each by kind, length, author, conversation and day; one chosen before that is no
 * longer among them stays offered as it was. `keep` labels a first choice, `keep`, for the
 * recording something has already (a template keeps its own copy).
 */
export function recordingSelect(
  select: { id: string; name: string },
  recordings: TeamRecording[],
  chosen: string,
  keep?: string,
): Html {
  const listed = chosen === 'keep' || recordings.some((r) => String(r.messageId) === chosen);
  return html`<select id="${select.id}" name="${select.name}">${
    keep ? html`<option value="keep"${chosen === 'keep' ? html` selected` : ''}>${keep}</option>` : ''
  }<option value=""${chosen === '' ? html` selected` : ''}>None</option>${
    chosen !== '' && !listed
      ? html`<option value="${chosen}" selected>Message ${chosen} (as chosen before)</option>`
      : ''
  }${recordings.map(
    (r) =>
      html`<option value="${r.messageId}"${String(r.messageId) === chosen ? html` selected` : ''}>${KIND_NAMES[r.kind] ?? 'Recording'} ${clockTime(r.seconds)} by ${r.author} in “${r.conversationTitle}”, ${r.createdAt.toISOString().slice(0, 10)}</option>`,
  )}</select>`;
}
