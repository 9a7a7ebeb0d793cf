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
  <link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="docs/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

// The document sits beside the docs page; validatorUrl null keeps Swagger UI from calling out.
const INIT = `window.ui = SwaggerUIBundle({
  url: location.pathname.replace(/\\/docs\\/?$/, '') + '/openapi.json',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
});
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
  const known = ASSETS.get(name);
  if (!known) return null;
  return new Response(await asset(known.file), { headers: { 'content-type': known.type, ...SECURITY } });
}
