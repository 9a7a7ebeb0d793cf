import { html } from 'hono/html';
import type { Html } from './layout.ts';

/** The one answer for a page that is missing and a page this visitor may not see: they must not differ. */
export const notFound = (): Html => html`<h1>Page not found</h1>
<p>There is no conversation at this address, or it is private.</p>`;

export const methodNotAllowed = (allowed: string): Html => html`<h1>Method not allowed</h1>
<p>This address answers ${allowed} only.</p>`;

export const unavailable = (): Html => html`<h1>Temporarily unavailable</h1>
<p>Conversations cannot be shown right now. Please try again in a moment.</p>`;
