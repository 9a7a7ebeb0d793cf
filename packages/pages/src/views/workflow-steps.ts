import type { TeamMemberView, TeamRecording, WorkflowStep } from '@convo/domain';
import { html } from 'hono/html';
import { formOfStep, MAX_FORM_STEPS } from '../workflow-form.ts';
import type { Html } from './layout.ts';
import { recordingSelect } from './recordings.ts';

/*
 * A workflow's steps as fields, one fieldset a step and a blank one to add: when (the trigger and
 * its settings), then what (the action and its settings). Every field is there without JavaScript,
 * each label saying when it counts; with JavaScript, only the fields of the chosen trigger and
 * action show (site.js). workflow-form.ts reads them back.
 */

const TRIGGERS: [string, string][] = [
  ['conversation.created', 'A conversation starts'],
  ['message.created', 'A message is posted'],
  ['message.played', 'A recording is watched'],
  ['no_reply', 'Nobody answers in time'],
  ['repeat', 'Again and again'],
];

const ACTIONS: [string, string][] = [
  ['post_message', 'Post a message as a teammate'],
  ['add_tags', 'Add tags'],
  ['add_members', 'Add people to the conversation'],
  ['notify', 'Mail teammates'],
  ['webhook', 'Send the workflow_step webhook'],
];

const options = (choices: [string, string][], chosen: string) =>
  choices.map(([v, label]) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${label}</option>`);

export interface StepsEditorState {
  /** What ids start with, unique on the page: `workflow-3`, `new-workflow`. */
  prefix: string;
  steps: WorkflowStep[];
  /** The fields of this form as it was sent and refused: shown again as they were. */
  sent?: Map<string, string[]> | undefined;
  team: TeamMemberView[];
  recordings: TeamRecording[];
  /** The account's message templates a step may post. */
  templates: readonly { id: number; name: string }[];
}

export function stepsEditor(s: StepsEditorState): Html {
  const fromSent = s.sent
    ? Array.from({ length: MAX_FORM_STEPS }, (_, n) => n).filter((n) => s.sent?.has(`step.${n}.trigger`))
    : null;
  const saved = s.steps.map(formOfStep);
  const count = Math.min(MAX_FORM_STEPS, fromSent ? (fromSent.at(-1) ?? -1) + 1 : saved.length + 1);
  return html`${Array.from({ length: count }, (_, n) =>
    stepFields(s, n, n >= saved.length && !fromSent ? null : (saved[n] ?? null), n >= saved.length),
  )}`;
}

function stepFields(s: StepsEditorState, n: number, step: Record<string, string> | null, adding: boolean): Html {
  const id = (name: string) => `${s.prefix}-step-${n}-${name}`;
  const name = (field: string) => `step.${n}.${field}`;
  const get = (field: string, otherwise = '') => s.sent?.get(name(field))?.[0] ?? step?.[field] ?? otherwise;
  const trigger = get('trigger', adding ? '' : 'conversation.created');
  const action = get('action', 'post_message');
  return html`<fieldset class="step" data-step>
<legend>${adding ? 'Add a step' : `Step ${n + 1}`}</legend>
<p><label for="${id('trigger')}">When</label><select id="${id('trigger')}" name="${name('trigger')}" data-choose="trigger">${
    adding ? html`<option value=""${trigger === '' ? html` selected` : ''}>No new step</option>` : ''
  }${options(TRIGGERS, trigger)}</select></p>
<p data-trigger="message.created message.played"><label for="${id('by')}">Whose message (when a message is posted or a recording watched)</label><select id="${id('by')}" name="${name('by')}">${options(
    [
      ['participant', 'Someone outside the team'],
      ['team', 'A teammate'],
      ['anyone', 'Anyone'],
    ],
    get('by', 'participant'),
  )}</select></p>
<p data-trigger="message.created"><label for="${id('in-thread')}">Where (when a message is posted)</label><select id="${id('in-thread')}" name="${name('in_thread')}">${options(
    [
      ['', 'Anywhere in the conversation'],
      ['true', 'Only a reply in a thread'],
      ['false', 'Only a message not in a thread'],
    ],
    get('in_thread', ''),
  )}</select></p>
<p data-trigger="no_reply"><label for="${id('from')}">Who has not answered (when nobody answers)</label><select id="${id('from')}" name="${name('from')}">${options(
    [
      ['team', 'The team, after someone outside it wrote'],
      ['participant', 'The other side, after the team wrote'],
    ],
    get('from', 'team'),
  )}</select></p>
<p data-trigger="conversation.created message.created message.played no_reply" class="wait"><label for="${id('wait')}">Wait first (for “nobody answers”: how long)</label><input id="${id('wait')}" name="${name('wait')}" inputmode="numeric" maxlength="9" value="${get('wait')}"><label for="${id('wait-unit')}" class="visually-hidden">Unit of the wait</label><select id="${id('wait-unit')}" name="${name('wait_unit')}">${options(
    [
      ['minutes', 'minutes'],
      ['hours', 'hours'],
      ['days', 'days'],
    ],
    get('wait_unit', 'hours'),
  )}</select></p>
<p data-trigger="repeat"><label for="${id('every')}">Every (again and again, from the start)</label><select id="${id('every')}" name="${name('every')}">${options(
    [
      ['day', 'day'],
      ['week', 'week'],
      ['month', 'month'],
    ],
    get('every', 'week'),
  )}</select></p>
<p data-trigger="repeat"><label for="${id('times')}">How many times in all</label><input id="${id('times')}" name="${name('times')}" inputmode="numeric" maxlength="3" value="${get('times')}"></p>
<p><label for="${id('action')}">Then</label><select id="${id('action')}" name="${name('action')}" data-choose="action">${options(ACTIONS, action)}</select></p>
<p data-action="post_message"><label for="${id('as')}">Post as</label><select id="${id('as')}" name="${name('as')}">${s.team.map(
    (m) =>
      html`<option value="${m.email}"${m.email.toLowerCase() === get('as').toLowerCase() ? html` selected` : ''}>${m.name} (${m.email})</option>`,
  )}</select></p>
<p data-action="post_message notify"><label for="${id('text')}">Text (the message posted, or a line in the mail)</label><textarea id="${id('text')}" name="${name('text')}" rows="3" maxlength="10000">${get('text')}</textarea></p>
<p data-action="post_message"><label for="${id('template')}">Or a message template (its text and recording take the place of those above)</label><select id="${id('template')}" name="${name('template')}"><option value="">None</option>${s.templates.map(
    (t) => html`<option value="${t.id}"${String(t.id) === get('template') ? html` selected` : ''}>${t.name}</option>`,
  )}</select></p>
<p data-action="post_message"><label for="${id('recording')}">Recording to post with it</label>${recordingSelect({ id: id('recording'), name: name('recording') }, s.recordings, get('recording'))}</p>
<p data-action="add_tags"><label for="${id('tags')}">Tags, commas between</label><input id="${id('tags')}" name="${name('tags')}" maxlength="2000" value="${get('tags')}"></p>
<p data-action="add_members notify"><label for="${id('emails')}">People by e-mail address, commas between (to add, or to mail)</label><input id="${id('emails')}" name="${name('emails')}" maxlength="7000" value="${get('emails')}"></p>
${
  adding
    ? ''
    : html`<p class="check"><input type="checkbox" id="${id('remove')}" name="${name('remove')}"${get('remove') === 'on' ? html` checked` : ''}><label for="${id('remove')}">Remove this step</label></p>`
}
</fieldset>`;
}
