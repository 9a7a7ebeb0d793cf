import { clockTime, type KeptTranscript } from '@convo/domain';
import { html } from 'hono/html';
import { csrfField } from './forms.ts';
import type { Html } from './layout.ts';

/*
 * A recording's transcript on the pages (docs/pages.md, "Transcripts and captions"): captions on
 * its player, its words folded under it; for the team, where it stands when it is not made, a way
 * to make it again, and a form to correct its words.
 */

/** How the transcripts of a page's messages are shown to this reader. */
export interface TranscriptsDisplay {
  /** The transcripts kept of the messages' recordings, by message. */
  kept: ReadonlyMap<number, KeptTranscript>;
  /** A speech engine is configured: one not made yet is being made (else no one will make it). */
  transcribing: boolean;
  /** The team's forms (their CSRF token), for a reader on the account's team. */
  team: { csrf: string } | null;
}

/** A player's captions: its transcript's WebVTT, on by default, in the language heard when it is a code. */
export const captionsTrack = (src: string, t: KeptTranscript): Html =>
  html`<track kind="captions" default src="${src}" label="Captions"${
    t.language && /^[a-z]{2,3}$/.test(t.language) ? html` srclang="${t.language}"` : ''
  }>`;

/** What shows under a recording: its transcript, folded, and the team's hand on it. */
export function transcriptBlock(
  slug: string,
  id: number,
  t: KeptTranscript | undefined,
  display: TranscriptsDisplay | undefined,
): Html | string {
  const team = display?.team ?? null;
  const complete = t?.status === 'complete' ? t : undefined;
  const words = complete && complete.segments.length > 0 ? transcriptLines(id, complete) : '';
  if (!team) return words;
  const action = `/c/${slug}/messages/${id}/transcript`;
  const again = (label: string) =>
    html`<form method="post" action="${action}" class="inline">${csrfField(team.csrf)}<button type="submit" name="action" value="retry" class="secondary small">${label}</button></form>`;
  if (complete) return html`${words}${correctForm(action, id, complete, team.csrf)}`;
  if (t?.status === 'failed') {
    return html`<p class="transcript-status">No transcript: ${t.reason ?? 'the speech engine could not make one'}. ${again('Try again')}</p>`;
  }
  if (t?.status === 'no_audio')
    return html`<p class="transcript-status">No transcript: the recording has no sound.</p>`;
  return display?.transcribing ? html`<p class="transcript-status">The transcript is being made.</p>` : '';
}

/** Each stretch of speech after its time: a link that plays the recording from there (site.js). */
const transcriptLines = (id: number, t: KeptTranscript): Html =>
  html`<details class="transcript"><summary>Transcript</summary><ol class="transcript-lines">${t.segments.map(
    (s) =>
      html`<li><a href="#message-${id}" data-seek="${Math.floor(s.start * 10) / 10}" data-player="message-${id}" aria-label="Play from ${clockTime(Math.floor(s.start))}">${clockTime(Math.floor(s.start))}</a> ${s.text}</li>`,
  )}</ol></details>`;

/** The team's correction: the captions' words, a line each (the times stay), and making it again. */
const correctForm = (action: string, id: number, t: KeptTranscript, csrf: string): Html =>
  html`<details class="transcript-fix"><summary>Correct the transcript</summary><form method="post" action="${action}">${csrfField(csrf)}
<label for="transcript-lines-${id}">One line for each caption: correct the words, keep the lines.</label>
<textarea id="transcript-lines-${id}" name="lines" rows="${Math.min(12, Math.max(3, t.segments.length))}">${t.segments.map((s) => s.text).join('\n')}</textarea>
<p class="actions"><button type="submit" name="action" value="correct">Save the correction</button> <button type="submit" name="action" value="retry" class="secondary">Make it again</button></p></form></details>`;
