import { inputObject, type Operation } from '@convo/router';
import { type FieldKinds, fieldKinds } from './input.ts';

/** One operation as REST serves it: its declared method, and how its fields are read. */
export interface Route {
  operation: Operation;
  method: string;
  kinds: FieldKinds;
}

/** The routes of the path a request named, and the values of the path's `{parameters}`. */
export interface Match {
  routes: Route[];
  params: [string, string][];
}

interface Template {
  /** The path's segments; a parameter's is its name in braces. */
  segments: string[];
  routes: Route[];
}

const isParameter = (segment: string) => segment.startsWith('{') && segment.endsWith('}');

/**
 * The routes under /api/v1, from each operation's declared meta (nothing else names one): plain
 * paths looked up at once, paths with `{parameters}` matched segment by segment.
 */
export function restRoutes(operations: readonly Operation[]): (path: string) => Match | null {
  const plain = new Map<string, Route[]>();
  const templates = new Map<string, Template>();
  for (const operation of operations) {
    const { method, path } = operation.meta.openapi;
    const route = { operation, method, kinds: fieldKinds(inputObject(operation.input)) };
    if (path.includes('{')) {
      const template = templates.get(path) ?? { segments: path.split('/'), routes: [] };
      template.routes.push(route);
      templates.set(path, template);
    } else {
      plain.set(path, [...(plain.get(path) ?? []), route]);
    }
  }

  function fill(template: Template, segments: string[]): [string, string][] | null {
    if (segments.length !== template.segments.length) return null;
    const params: [string, string][] = [];
    for (const [i, declared] of template.segments.entries()) {
      const given = segments[i] as string;
      if (!isParameter(declared)) {
        if (given !== declared) return null;
        continue;
      }
      if (given === '') return null;
      try {
        params.push([declared.slice(1, -1), decodeURIComponent(given)]);
      } catch {
        return null;
      }
    }
    return params;
  }

  return (path) => {
    const routes = plain.get(path);
    if (routes) return { routes, params: [] };
    const segments = path.split('/');
    for (const template of templates.values()) {
      const params = fill(template, segments);
      if (params) return { routes: template.routes, params };
    }
    return null;
  };
}

/** What a 405 names in Allow: the path's methods, HEAD wherever GET is. */
export const allowed = (routes: Route[]): string =>
  routes.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])).join(', ');

/** As HTTP and OpenAPI have it: GET and DELETE take their input from the URL, the others from the body. */
export const takesBody = (method: string) => method !== 'GET' && method !== 'DELETE';
