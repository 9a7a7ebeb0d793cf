import { inputObject, type Operation } from '@convo/router';
import { type FieldKinds, fieldKinds } from './input.ts';

/** One operation as REST serves it: its declared method, and how its fields are read. */
export interface Route {
  operation: Operation;
  method: string;
  kinds: FieldKinds;
  /** It takes a recording: its body may be multipart/form-data, with the file as `recording`. */
  recording: boolean;
}

/** The routes under /api/v1, from each operation's declared meta (nothing else names one). */
export const restRoutes = (operations: readonly Operation[]): Route[] =>
  operations.map((operation) => ({
    operation,
    method: operation.meta.openapi.method,
    kinds: fieldKinds(inputObject(operation.input)),
    recording: operation.meta.openapi.contentTypes?.includes('multipart/form-data') === true,
  }));

/** What a 405 names in Allow: the path's methods, HEAD wherever GET is. */
export const allowed = (routes: Route[]): string =>
  routes.flatMap((r) => (r.method === 'GET' ? ['GET', 'HEAD'] : [r.method])).join(', ');

/** As HTTP and OpenAPI have it: GET and DELETE take their input from the URL, the others from the body. */
export const takesBody = (method: string) => method !== 'GET' && method !== 'DELETE';
