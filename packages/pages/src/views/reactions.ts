import { REACTIONS, type ReactionCount, type ReactionName, reactionLabel } from '@convo/domain';
import { html } from 'hono/html';
import type { Html } from './layout.ts';

/*
 * A message's reactions under it (docs/pages.md, "Reactions"): the kinds someone chose, with their
 * counts; for a reader who may react, each a button of a plain form (pressed: theirs, which takes
 * it back), and "React", a link to the whole set (its own small page without JavaScript; in place
 * with it). A page of fifty messages carries one link each, not fifty sets. Without JavaScript the
 * form posts and the page comes back; with it, site.js posts it in place and the list follows the
 * live updates.
 */

/** Where a message's reactions are changed (POST) and read (GET, a live update). */
export const reactionsUrl = (slug: string, id: number) => `/c/${slug}/messages/${id}/reactions`;

/** How a reader meets the reactions: with the form (their CSRF token) or the counts alone. */
export interface ReactionsDisplay {
  /** The reader may react: the form's token; null: the counts alone. */
  csrf: string | null;
  shown: ReadonlyMap<number, readonly ReactionCount[]>;
}

const kindOf = (name: string) => REACTIONS.find((r) => r.name === name);

/** A kind someone chose: its emoji and count, and (hidden, for a screen reader) what it is and whether it is theirs. */
const chosen = (r: ReactionCount, named: boolean) =>
  html`<span aria-hidden="true">${kindOf(r.reaction)?.emoji ?? ''} <span class="reaction-count">${r.count}</span></span><span class="visually-hidden">${reactionLabel(r, named)}</span>`;

/** How the set shows: not at all ("React" links to it), on its own page, or opened in place (site.js; "Done" closes it). */
export type PickerShown = 'closed' | 'page' | 'inline';

/** A message's reactions for this reader: nothing when there are none and they may not react. */
export function reactions(
  slug: string,
  id: number,
  list: readonly ReactionCount[],
  csrf: string | null,
  picker: PickerShown = 'closed',
): Html | string {
  const named = list.some((r) => r.names.length > 0);
  if (csrf === null) {
    if (list.length === 0) return '';
    return html`<ul class="reactions" id="reactions-${id}" aria-label="Reactions">${list.map(
      (r) => html`<li>${chosen(r, named)}</li>`,
    )}</ul>`;
  }
  const mine = new Set<string>(list.filter((r) => r.mine).map((r) => r.reaction));
  const button = (name: ReactionName, content: Html) =>
    html`<button type="submit" class="reaction" name="${mine.has(name) ? 'remove' : 'add'}" value="${name}" aria-pressed="${mine.has(name) ? 'true' : 'false'}">${content}</button>`;
  const pills =
    list.length > 0
      ? html`<ul class="reaction-list" aria-label="Reactions">${list.map((r) => html`<li>${button(r.reaction, chosen(r, named))}</li>`)}</ul>`
      : '';
  const url = reactionsUrl(slug, id);
  if (picker === 'closed') {
    return html`<form class="reactions" id="reactions-${id}" method="post" action="${url}">${
      list.length > 0 ? html`<input type="hidden" name="csrf" value="${csrf}">` : ''
    }${pills}<a class="react-link" href="${url}">React</a></form>`;
  }
  return html`<form class="reactions" id="reactions-${id}" method="post" action="${url}">
<input type="hidden" name="csrf" value="${csrf}">${picker === 'inline' ? html`<input type="hidden" name="picker" value="inline">` : ''}${pills}<div class="picker" role="group" aria-label="React with">${REACTIONS.map(
    (k) =>
      button(
        k.name,
        html`<span aria-hidden="true">${k.emoji}</span><span class="visually-hidden">${mine.has(k.name) ? `Take back ${k.label}` : k.label}</span>`,
      ),
  )}${picker === 'inline' ? html`<button type="button" class="secondary small react-done">Done</button>` : ''}</div></form>`;
}
