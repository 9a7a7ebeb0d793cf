import type { WorkflowStep } from '@convo/domain';

/*
 * A workflow's steps as the team's step editor sends them: `step.<n>.<field>` for each step shown
 * (and one blank to add), read into the steps the API takes; the use case then checks them by the
 * API's schema, so the editor and the JSON are held to the same rules and name the same fields.
 */

/** Units a wait is typed in, as seconds. */
export const WAIT_UNITS = { minutes: 60, hours: 3_600, days: 86_400 } as const;

export type WaitUnit = keyof typeof WAIT_UNITS;

/** A wait in seconds as the editor shows it: the largest unit it is a whole number of. */
export function waitOf(seconds: number): { amount: number; unit: WaitUnit } {
  for (const unit of ['days', 'hours', 'minutes'] as const) {
    if (seconds > 0 && seconds % WAIT_UNITS[unit] === 0) return { amount: seconds / WAIT_UNITS[unit], unit };
  }
  return { amount: Math.round(seconds / 60), unit: 'minutes' };
}

/** The most steps the form offers at once: the ones there are, and one to add. */
export const MAX_FORM_STEPS = 21;

const list = (value: string): string[] =>
  value
    .split(/[\s,]+/)
    .map((v) => v.trim())
    .filter((v) => v !== '');

/** A whole number typed, or NaN (which the schema refuses, naming the field). */
const whole = (value: string): number => (/^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN);

/**
 * The steps the form describes, in order: each step whose trigger is chosen and which is not
 * marked for removal. What is not a known choice is passed on as it is, for the schema to refuse.
 */
export function stepsFromForm(field: (name: string) => string | undefined): unknown[] {
  const steps: unknown[] = [];
  for (let n = 0; n < MAX_FORM_STEPS; n++) {
    const get = (name: string) => field(`step.${n}.${name}`) ?? '';
    const type = get('trigger');
    if (type === '' || get('remove') === 'on') continue;
    const unit = WAIT_UNITS[get('wait_unit') as WaitUnit] ?? Number.NaN;
    const wait = get('wait').trim() === '' ? 0 : whole(get('wait')) * unit;
    const where = get('in_thread');
    const trigger =
      type === 'message.created'
        ? {
            type,
            by: get('by'),
            ...(where === '' ? {} : { in_thread: where === 'true' ? true : where === 'false' ? false : where }),
            delay_seconds: wait,
          }
        : type === 'message.played'
          ? { type, by: get('by'), delay_seconds: wait }
          : type === 'no_reply'
            ? { type, from: get('from'), within_seconds: wait }
            : type === 'repeat'
              ? { type, every: get('every'), times: whole(get('times')) }
              : { type, delay_seconds: wait };
    const kind = get('action');
    const text = get('text').replace(/\r\n?/g, '\n');
    const recording = get('recording');
    const template = get('template');
    const action =
      kind === 'post_message'
        ? {
            type: kind,
            as: get('as'),
            ...(text.trim() === '' ? {} : { text }),
            ...(recording === '' ? {} : { recording_message_id: whole(recording) }),
            ...(template === '' ? {} : { template_id: whole(template) }),
          }
        : kind === 'add_tags'
          ? { type: kind, tags: list(get('tags')) }
          : kind === 'add_members'
            ? { type: kind, emails: list(get('emails')) }
            : kind === 'notify'
              ? { type: kind, emails: list(get('emails')), ...(text.trim() === '' ? {} : { text }) }
              : { type: kind };
    steps.push({ trigger, action });
  }
  return steps;
}

/** A saved step as the editor's fields (what `stepsFromForm` reads back to the same step). */
export function formOfStep(step: WorkflowStep): Record<string, string> {
  const t = step.trigger;
  const a = step.action;
  const seconds = t.type === 'no_reply' ? t.within_seconds : t.type === 'repeat' ? 0 : (t.delay_seconds ?? 0);
  const wait = waitOf(seconds);
  return {
    trigger: t.type,
    by: t.type === 'message.created' || t.type === 'message.played' ? t.by : 'participant',
    in_thread: t.type === 'message.created' && t.in_thread !== undefined ? String(t.in_thread) : '',
    from: t.type === 'no_reply' ? t.from : 'team',
    wait: seconds === 0 ? '' : String(wait.amount),
    wait_unit: seconds === 0 ? 'hours' : wait.unit,
    every: t.type === 'repeat' ? t.every : 'week',
    times: t.type === 'repeat' ? String(t.times) : '',
    action: a.type,
    as: a.type === 'post_message' ? a.as : '',
    text: a.type === 'post_message' || a.type === 'notify' ? (a.text ?? '') : '',
    recording: a.type === 'post_message' && a.recording_message_id !== undefined ? String(a.recording_message_id) : '',
    template: a.type === 'post_message' && a.template_id !== undefined ? String(a.template_id) : '',
    tags: a.type === 'add_tags' ? a.tags.join(', ') : '',
    emails: a.type === 'add_members' || a.type === 'notify' ? a.emails.join(', ') : '',
  };
}
