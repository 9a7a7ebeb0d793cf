import type { PagePosition } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';
import type { Logger } from './logger.ts';

/** What a request's procedures may use: services shared by the process. */
export interface Services {
  /** A fresh EntityManager for one request; never the global one. */
  forkEm(): EntityManager;
  logger: Logger;
  /** Records that a token was used; throttled, so not a write per request. */
  touchToken(tokenId: number): Promise<void>;
}

/** What a procedure tells its transport beside its result (shared by reference through middleware). */
export interface ResponseNotes {
  pagePosition?: PagePosition;
}

export interface Context {
  services: Services;
  em: EntityManager;
  authorization: string | null;
  requestId: string;
  notes: ResponseNotes;
}

export function createContext(services: Services, req: Request, requestId: string): Context {
  return {
    services,
    em: services.forkEm(),
    authorization: req.headers.get('authorization'),
    requestId,
    notes: {},
  };
}
