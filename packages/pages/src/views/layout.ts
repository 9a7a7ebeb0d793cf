import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { SCRIPT, STYLESHEET } from '../assets/index.ts';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What link previews (Open Graph) may say about a page: only ever given for public conversations. */
export interface Preview {
  title: string;
  description: string;
  url: string;
  siteName: string;
}

export interface Head {
  title: string;
  /** Ask search engines not to index this page. */
  noindex: boolean;
  preview?: Preview | undefined;
  canonical?: string | undefined;
}

/** The HTML document around a page's content. Every value is escaped by the `html` tag. */
export function document(head: Head, body: Html, frame: { embed?: boolean } = {}): Html {
  const p = head.preview;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${head.title}</title>
${head.noindex ? html`<meta name="robots" content="noindex">` : ''}
${head.canonical ? html`<link rel="canonical" href="${head.canonical}">` : ''}
${
  p
    ? html`<meta property="og:type" content="article">
<meta property="og:title" content="${p.title}">
<meta property="og:description" content="${p.description}">
<meta property="og:url" content="${p.url}">
<meta property="og:site_name" content="${p.siteName}">`
    : ''
}
<link rel="stylesheet" href="${STYLESHEET.path}">
<script src="${SCRIPT.path}" defer></script>
</head>
<body${frame.embed ? html` class="embed"` : ''}>
${body}
</body>
</html>
`;
}

/** The account's site around a page: its name above (and the team's nav, for the team), and below. */
export function chrome(
  siteName: string,
  content: Html,
  session: Html = html``,
  nav: Html = html``,
  wide = false,
): Html {
  const width = wide ? ' wide' : '';
  return html`<header class="site-header${width}"><div><p class="site-name"><a href="/">${siteName}</a></p>${session}</div>${nav}</header>
<main id="content"${wide ? html` class="wide"` : ''}>
${content}
</main>
<footer class="site-footer${width}"><p>Conversations hosted for ${siteName}</p></footer>`;
}
