import { html } from 'hono/html';

/**
 * A mail's HTML part: its plain text, escaped by the `html` tag (nothing a person wrote becomes
 * markup), with its line breaks kept.
 */
export const mailHtml = (text: string): string =>
  String(html`<!doctype html>
<html><body><div style="white-space: pre-wrap; font-family: sans-serif">${text}</div></body></html>
`);
