export const PAGE_SIZE = 50;
export const FIRST_PAGE = 1;
/** Beyond this, `(page - 1) * PAGE_SIZE` would no longer be an exact JS integer. */
export const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / PAGE_SIZE);

export interface PageWindow {
  limit: number;
  offset: number;
}

/** Pages count from 1; page n holds the n-th block of 50, newest created first. */
export function pageWindow(page: number = FIRST_PAGE): PageWindow {
  if (!Number.isInteger(page) || page < FIRST_PAGE || page > MAX_PAGE) {
    throw new RangeError(`page must be an integer from ${FIRST_PAGE} to ${MAX_PAGE}`);
  }
  return { limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE };
}
