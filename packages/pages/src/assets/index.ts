import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The site's static assets, read once at start and served from memory. Each is addressed by a
 * hash of its content, so browsers may keep it for a year and a new release is fetched at once.
 */
export interface Asset {
  path: string;
  type: string;
  body: string;
}

function asset(file: string, type: string, from: URL | string = new URL(file, import.meta.url)): Asset {
  // A library's own source map is not served: its comment would only ask for a missing file.
  const body = readFileSync(from, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  const digest = hash('sha256', body, 'hex').slice(0, 12);
  const ext = file.slice(file.lastIndexOf('.') + 1);
  const name = file.slice(0, file.lastIndexOf('.'));
  return { path: `/assets/${name}-${digest}.${ext}`, type, body };
}

export const STYLESHEET = asset('site.css', 'text/css; charset=utf-8');
/** Local times and an embed's height: the pages work without it (JavaScript off). */
export const SCRIPT = asset('site.js', 'text/javascript; charset=utf-8');

/**
 * tus-js-client, which sends a recording as it is made and resumes it after a dropped connection:
 * loaded by the recorder (site.js) only when someone records.
 */
export const UPLOADER = asset(
  'tus.min.js',
  'text/javascript; charset=utf-8',
  createRequire(import.meta.url).resolve('tus-js-client/dist/tus.min.js'),
);

export const ASSETS = new Map<string, Asset>([STYLESHEET, SCRIPT, UPLOADER].map((a) => [a.path, a]));
