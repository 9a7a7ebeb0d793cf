import { html } from 'hono/html';
import type { Html } from './layout.ts';

/** The one answer for a page that is missing and a page this visitor may not see: they must not differ. */
export const notFound = (): Html => html`<h1>Page not found</h1>
<p>There is no conversation at this address, or it is private.</p>
<p><a href="/">Go to the home page</a> or <a href="/sign-in">sign in</a>, if it is a conversation of yours.</p>`;

export const methodNotAllowed = (allowed: string): Html => html`<h1>Method not allowed</h1>
<p>This address answers ${allowed} only.</p>`;

/** A failure of ours; after a form, the visitor learns it is safe to send it again (its form token posts once). */
export const unavailable = (after: { form: boolean }): Html =>
  after.form
    ? html`<h1>Temporarily unavailable</h1>
<p>What you sent was not saved. Go back and send it again in a moment: a reply is never posted twice.</p>`
    : html`<h1>Temporarily unavailable</h1>
<p>Conversations cannot be shown right now. Please try again in a moment.</p>`;
