import type { PagePosition } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

/** What a request's procedures may use: services shared by the process. */
export interface Services {
  /** A fresh EntityManager for one request; never the global one. */
  forkEm(): EntityManager;
  logger: Logger;
  /** Records that a token was used; throttled, so not a write per request. */
  touchToken(tokenId: number): Promise<void>;
  /** Null when the database answers and every migration is applied; else what is wrong. */
  notReady(): Promise<string | null>;
  metrics: Metrics;
}

/** What a procedure tells its transport beside its result (shared by reference through middleware). */
export interface ResponseNotes {
  pagePosition?: PagePosition;
  /** The authenticated account, for the request log. */
  accountId?: number;
}

/** One request as the transports see it: its id, and the notes its procedure leaves. */
export interface RequestState {
  id: string;
  notes: ResponseNotes;
}

export interface Context {
  services: Services;
  em: EntityManager;
  authorization: string | null;
  requestId: string;
  notes: ResponseNotes;
}

export function createContext(services: Services, req: Request, request: RequestState): Context {
  return {
    services,
    em: services.forkEm(),
    authorization: req.headers.get('authorization'),
    requestId: request.id,
    notes: request.notes,
  };
}
