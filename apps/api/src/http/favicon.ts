/*
 * The service's icon, a speech bubble, answered at /favicon.ico on every host (the API's and each
 * account's), so no browser tab asks for it in vain. SVG, which browsers take at any path when
 * the content type says so.
 */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<path fill="#1f5fa8" d="M6 4h20a4 4 0 0 1 4 4v12a4 4 0 0 1-4 4H14l-7 6v-6H6a4 4 0 0 1-4-4V8a4 4 0 0 1 4-4z"/>
<path fill="#fff" d="M9 11h14v2H9zm0 5h10v2H9z"/>
</svg>
`;

export const faviconResponse = (): Response =>
  new Response(FAVICON, {
    headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' },
  });
