/**
 * An answer's JSON text as its store wrote it, for the view type `T` it holds: written to the
 * socket as it is, and parsed only where an answer must be an object (tRPC, the answer checks of
 * development and tests). The store's SQL builds it; a test holds it equal, field by field, to
 * the domain's view of the same rows.
 */
export interface WireJson<T> {
  readonly text: string;
  /** Never set: says which view the text holds. */
  readonly view?: T;
}
