import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The site's static assets, read once at start and served from memory. Each is addressed by a
 * hash of its content, so browsers may keep it for a year and a new release is fetched at once.
 */
export interface Asset {
  path: string;
  type: string;
  body: string;
}

function asset(file: string, type: string): Asset {
  const body = readFileSync(new URL(file, import.meta.url), 'utf8');
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const [name, ext] = file.split('.');
  return { path: `/assets/${name}-${hash}.${ext}`, type, body };
}

export const STYLESHEET = asset('site.css', 'text/css; charset=utf-8');
/** Local times and an embed's height: the pages work without it (JavaScript off). */
export const SCRIPT = asset('site.js', 'text/javascript; charset=utf-8');

export const ASSETS = new Map<string, Asset>([STYLESHEET, SCRIPT].map((a) => [a.path, a]));
