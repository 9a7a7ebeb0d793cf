import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/*
 * The interactive API reference (Swagger UI) at /api/v1/docs, served entirely from this server:
 * operators run it behind firewalls, so nothing may come from a CDN. The assets are read from the
 * swagger-ui-dist package once, on first use.
 */

// A Map, not an object: a name from the URL (`constructor`, `__proto__`) must find nothing.
const ASSETS = new Map([
  ['swagger-ui.css', { file: 'swagger-ui-dist/swagger-ui.css', type: 'text/css; charset=utf-8' }],
  ['swagger-ui-bundle.js', { file: 'swagger-ui-dist/swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' }],
]);

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Conversations API reference</title>
  <link rel="icon" href="/favicon.ico" type="image/svg+xml">
  <link rel="stylesheet" href="docs/swagger-ui.css">
  <link rel="stylesheet" href="docs/docs.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

/*
 * The document sits beside the docs page; validatorUrl null keeps Swagger UI from calling out.
 * Deep links are off: Swagger UI puts each one inside the operation's toggle button, a link
 * nested in a button that screen readers and keyboards cannot reach apart. What Swagger UI leaves
 * unnamed or unreachable (the server and example selects, a boolean parameter's select, code
 * samples that scroll) is named and made focusable as it renders.
 */
const INIT = `const NAMES = { servers: 'Server', 'examples-select-element': 'Example' };
function repair(root) {
  for (const select of root.querySelectorAll('select:not([aria-label])')) {
    const row = select.closest('tr[data-param-name]');
    const name = NAMES[select.id] || NAMES[select.className] || (row && row.getAttribute('data-param-name'));
    if (name) select.setAttribute('aria-label', name);
  }
  for (const code of root.querySelectorAll('.microlight:not([tabindex])')) code.setAttribute('tabindex', '0');
}
const root = document.getElementById('swagger-ui');
new MutationObserver(() => repair(root)).observe(root, { childList: true, subtree: true });
window.ui = SwaggerUIBundle({
  url: location.pathname.replace(/\\/docs\\/?$/, '') + '/openapi.json',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: false,
  tryItOutEnabled: false,
  syntaxHighlight: { activated: false },
});
`;

/** Swagger UI's colours where they fall under WCAG AA contrast (4.5:1) on its white page. */
const CSS = `.swagger-ui .info .title small { background: #4f5663; }
.swagger-ui .info .title small.version-stamp { background: #3d6b00; }
.swagger-ui .info a, .swagger-ui .info .url, .swagger-ui a.nostyle, .swagger-ui .info__license__url .link { color: #1f5fa8; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #1b7047; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1f5fa8; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b3261e; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #8a4b08; }
.swagger-ui .btn.authorize { color: #1b7047; border-color: #1b7047; }
.swagger-ui .btn.authorize svg { fill: #1b7047; }
.swagger-ui .parameter__in, .swagger-ui .parameter__deprecated, .swagger-ui .prop-format,
.swagger-ui .json-schema-2020-12-expand-deep-button, .swagger-ui .json-schema-2020-12__attribute,
.swagger-ui .json-schema-2020-12-keyword__name--secondary, .swagger-ui .json-schema-2020-12-keyword__value--secondary,
.swagger-ui .model-hint, .swagger-ui .prop-type, .swagger-ui .model .property.primitive { color: #4f5663; }
.swagger-ui .parameters select[disabled] { color: #4f5663; background-color: #fff; opacity: 1; }
.swagger-ui .renderedMarkdown code { color: #6b0fbf; }
`;

const SECURITY = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
};

const cache = new Map<string, Promise<Uint8Array>>();

function asset(file: string): Promise<Uint8Array> {
  let loaded = cache.get(file);
  if (!loaded) {
    loaded = readFile(fileURLToPath(import.meta.resolve(file)));
    cache.set(file, loaded);
  }
  return loaded;
}

/** Answers /api/v1/docs and its assets; null for any other path below it. */
export async function serveDocs(prefix: string, path: string): Promise<Response | null> {
  // The page links its assets relative to /api/v1/, so it is served without a trailing slash.
  if (path === `${prefix}/docs/`) return new Response(null, { status: 301, headers: { location: `${prefix}/docs` } });
  if (path === `${prefix}/docs`) {
    return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY } });
  }
  const name = path.slice(`${prefix}/docs/`.length);
  if (name === 'init.js') return new Response(INIT, { headers: { 'content-type': 'text/javascript; charset=utf-8' } });
  if (name === 'docs.css') return new Response(CSS, { headers: { 'content-type': 'text/css; charset=utf-8' } });
  const known = ASSETS.get(name);
  if (!known) return null;
  return new Response(await asset(known.file), { headers: { 'content-type': known.type, ...SECURITY } });
}
