import type { LookupMatch, PagePosition } from '@convo/domain';

/** What a procedure tells its transport beside its answer. */
export interface Notes {
  /** Where a page of a list sits (REST's Link header). */
  pagePosition?: PagePosition;
  /** Which lookup keys get_conversation's answer matched (the Conversation-Matched header). */
  lookupMatch?: LookupMatch;
  /** An Idempotency-Key replayed a stored response (the Idempotent-Replayed header). */
  idempotentReplay?: boolean;
}

/**
 * An operation's answer with its notes: what a resolver returns when it has something to tell the
 * transport (one with nothing to tell returns the body alone). The REST route reads the notes
 * from the operation's call; the tRPC procedure turns them into its response's headers.
 */
export class Answer<T> {
  readonly body: T;
  readonly notes: Notes;

  constructor(body: T, notes: Notes) {
    this.body = body;
    this.notes = notes;
  }
}

export const answer = <T>(body: T, notes: Notes): Answer<T> => new Answer(body, notes);

/** The headers notes become on either transport (REST adds Link, which needs the request's URL). */
export function noteHeaders(notes: Notes): [string, string][] {
  const headers: [string, string][] = [];
  if (notes.idempotentReplay) headers.push(['idempotent-replayed', 'true']);
  if (notes.lookupMatch) headers.push(['conversation-matched', notes.lookupMatch]);
  return headers;
}
