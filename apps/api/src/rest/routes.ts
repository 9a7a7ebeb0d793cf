import type { Operation } from '@convo/router';
import { type FieldKinds, fieldKinds } from './input.ts';

/** One operation as REST serves it: its declared method, and how its fields are read. */
export interface Route {
  operation: Operation;
  method: string;
  kinds: FieldKinds;
}

/** The routes by path under /api/v1, from each operation's declared meta; nothing else names one. */
export function restRoutes(operations: readonly Operation[]): Map<string, Route[]> {
  const byPath = new Map<string, Route[]>();
  for (const operation of operations) {
    const { method, path } = operation.meta.openapi;
    const routes = byPath.get(path) ?? [];
    routes.push({ operation, method, kinds: fieldKinds(operation.input) });
    byPath.set(path, routes);
  }
  return byPath;
}

/** What a 405 names in Allow: the path's methods, HEAD wherever GET is. */
export const allowed = (routes: Route[]): string =>
  routes.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])).join(', ');
