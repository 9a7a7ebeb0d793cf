/**
 * Waits for the next window of `seconds` when fewer than `marginMs` are left of the current one.
 * The per-address limits count in windows aligned on the clock (PostgreSQL's `date_bin` from
 * 2000-01-01, a whole minute), so a test that counts up to a limit must not straddle two of them:
 * it would be served two windows' worth.
 */
export async function awayFromWindowEnd(seconds = 60, marginMs = 10_000): Promise<void> {
  const ms = seconds * 1000;
  const left = ms - (Date.now() % ms);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 200));
}
