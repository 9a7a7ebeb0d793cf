import type { RateLimitState } from '@convo/db';
import type { PagePosition } from '@convo/domain';
import type { EntityManager } from '@mikro-orm/core';

/** What the procedures need from the process that serves them. */
export interface ProcedureServices {
  /** A fresh EntityManager for one request; never the global one. */
  forkEm(): EntityManager;
  /** Records that a token was used; throttled, so not a write per request. */
  touchToken(tokenId: number): Promise<void>;
  /** Spends one request of the token's quota; null when the token is not limited. */
  rateLimit(tokenId: number, accountId: number, accountLimit: number | null): Promise<RateLimitState | null>;
}

/** What a procedure tells its transport beside its result (shared by reference through middleware). */
export interface ResponseNotes {
  pagePosition?: PagePosition;
  /** The authenticated account, for the request log. */
  accountId?: number;
  /** The token's quota after this request, for the RateLimit-* headers. */
  rateLimit?: RateLimitState;
  /** Set when an Idempotency-Key replayed a stored response. */
  idempotentReplay?: boolean;
}

/** One request as the transports see it: its id, and the notes its procedure leaves. */
export interface RequestState {
  id: string;
  notes: ResponseNotes;
}

export interface Context {
  services: ProcedureServices;
  em: EntityManager;
  authorization: string | null;
  idempotencyKey: string | null;
  requestId: string;
  notes: ResponseNotes;
}

export function createContext(services: ProcedureServices, req: Request, request: RequestState): Context {
  return {
    services,
    em: services.forkEm(),
    authorization: req.headers.get('authorization'),
    idempotencyKey: req.headers.get('idempotency-key'),
    requestId: request.id,
    notes: request.notes,
  };
}
