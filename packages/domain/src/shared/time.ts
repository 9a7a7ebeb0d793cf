/**
 * Creation times travel as microseconds since the Unix epoch (a bigint), because
 * PostgreSQL records microseconds and a JS Date would drop three digits.
 */
export type EpochMicros = bigint;

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

export function ordinal(day: number): string {
  const lastTwo = day % 100;
  if (lastTwo >= 11 && lastTwo <= 13) return `${day}th`;
  switch (day % 10) {
    case 1:
      return `${day}st`;
    case 2:
      return `${day}nd`;
    case 3:
      return `${day}rd`;
    default:
      return `${day}th`;
  }
}

function split(micros: EpochMicros): { date: Date; micro: number } {
  const perSecond = 1_000_000n;
  const micro = ((micros % perSecond) + perSecond) % perSecond;
  const seconds = (micros - micro) / perSecond;
  return { date: new Date(Number(seconds) * 1000), micro: Number(micro) };
}

export const microsFromDate = (date: Date): EpochMicros => BigInt(date.getTime()) * 1000n;

export const dateFromMicros = (micros: EpochMicros): Date => split(micros).date;

let lastMicros = 0n;

/**
 * The one clock a new conversation's time comes from: its default title names this time's date
 * and its created_at stores it, so the two can never disagree (around midnight UTC the server's
 * and the database's clocks could). Wall-clock milliseconds with the monotonic clock's
 * sub-millisecond digits, and strictly increasing within a process.
 */
export function clockMicros(): EpochMicros {
  const now = BigInt(Date.now()) * 1000n + BigInt(Math.floor((performance.now() % 1) * 1000));
  lastMicros = now > lastMicros ? now : lastMicros + 1n;
  return lastMicros;
}

/** A time as PostgreSQL's timestamptz reads it, microseconds and all. */
export const timestamptzText = (micros: EpochMicros): string => `${formatCreatedTime(micros)}+00`;

/** `YYYY-MM-DD HH:MM:SS.ffffff`, UTC. */
export function formatCreatedTime(micros: EpochMicros): string {
  const { date: d, micro } = split(micros);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(micro, 6)}`
  );
}

/** `February 1st, 2022` (UTC). */
export function formatLongDate(date: Date): string {
  return `${MONTHS[date.getUTCMonth()]} ${ordinal(date.getUTCDate())}, ${date.getUTCFullYear()}`;
}

/** `05:21PM UTC`: 12-hour clock, zero-padded; midnight is 12:xxAM and noon 12:xxPM. */
export function formatClockTime(date: Date): string {
  const hours = date.getUTCHours();
  const twelve = hours % 12 === 0 ? 12 : hours % 12;
  return `${pad(twelve)}:${pad(date.getUTCMinutes())}${hours < 12 ? 'AM' : 'PM'} UTC`;
}

/** `February 1st, 2022 05:21PM UTC`. */
export function formatNiceTime(micros: EpochMicros): string {
  const { date } = split(micros);
  return `${formatLongDate(date)} ${formatClockTime(date)}`;
}

/** `2022-02-01T17:21:09.123456Z`: ISO 8601 in UTC to the microsecond, for `<time datetime>`. */
export function formatIsoTime(micros: EpochMicros): string {
  const { date, micro } = split(micros);
  // toISOString is native and gives the seconds; the microseconds follow.
  return `${date.toISOString().slice(0, 19)}.${pad(micro, 6)}Z`;
}

/** `2022-02-01T17:21:09.123Z`: ISO 8601 in UTC to the millisecond, as `Date#toISOString` writes it. */
export const formatIsoMillis = (micros: EpochMicros): string => new Date(Number(micros / 1000n)).toISOString();

/** How long a recording is, as a player's clock shows it: 0:03, 12:40, 1:02:03. */
export function clockTime(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
