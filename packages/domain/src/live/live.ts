/*
 * Live conversations: what changed, in the order a reader may rely on. Every change a reader would
 * see, and every change to who may read, is an event with a position; a stream resumed from a
 * position gets every event after it, in order, and nothing twice.
 */

/** What happened: to a message (`played`: a receipt of it; `reacted`: its reactions changed; `transcribed`: its recording's transcript was made or corrected), to the members, or to who someone is on the site. */
export const LIVE_EVENT_KINDS = [
  'posted',
  'hidden',
  'shown',
  'deleted',
  'member_added',
  'member_removed',
  'signed_out',
  'team_changed',
  'played',
  'reacted',
  'transcribed',
] as const;
export type LiveEventKind = (typeof LIVE_EVENT_KINDS)[number];

export const isLiveEventKind = (value: string): value is LiveEventKind => LIVE_EVENT_KINDS.some((k) => k === value);

export interface LiveEvent {
  /** Where it is in the feed: `<transaction>.<event>`, compared as a pair of numbers. */
  position: string;
  kind: LiveEventKind;
  accountId: number;
  /** Null for changes to a person (signed out, team role). */
  conversationId: number | null;
  messageId: number | null;
  /**
   * The author of a message posted or played; the member added or taken out; the person signed out
   * or moved.
   */
  userId: number | null;
  /** An event of an internal note: told to the account's team alone. */
  internal: boolean;
}

/** What a stream follows: one conversation of an account, or (the team's inbox) all of them. */
export interface LiveScope {
  accountId: number;
  conversationId: number | null;
}

/** A position as the feed writes it (an `id:` of the stream, a `Last-Event-ID`). */
const POSITION = /^(\d{1,19})\.(\d{1,19})$/;

export interface Position {
  xid: bigint;
  id: bigint;
}

export function parsePosition(value: string | null | undefined): Position | null {
  const parsed = value ? POSITION.exec(value) : null;
  if (!parsed) return null;
  const xid = BigInt(parsed[1] ?? '0');
  const id = BigInt(parsed[2] ?? '0');
  // Both are bigint columns: nothing past 2^63 - 1 is a position this server wrote.
  return xid < 2n ** 63n && id < 2n ** 63n ? { xid, id } : null;
}

export const formatPosition = (p: Position): string => `${p.xid}.${p.id}`;

/** True when `a` comes after `b` in the feed. */
export const isAfter = (a: Position, b: Position): boolean => a.xid > b.xid || (a.xid === b.xid && a.id > b.id);

/** Is the event about what `scope` follows? A person's change is about every stream of their account. */
export const inScope = (e: LiveEvent, scope: LiveScope): boolean =>
  e.accountId === scope.accountId &&
  (scope.conversationId === null || e.conversationId === null || e.conversationId === scope.conversationId);

/**
 * Does the event change who may follow the stream: a member taken out of its conversation, or a
 * person signed out or moved on the team? Such a stream asks the page's rule again.
 */
export const changesAccess = (e: LiveEvent): boolean =>
  e.kind === 'member_removed' || e.kind === 'signed_out' || e.kind === 'team_changed';

/** A page of the feed after a position. */
export interface LiveRead {
  events: LiveEvent[];
  /**
   * Events are written after these that cannot be read yet: an older transaction is still open,
   * and may yet write before them. Read again shortly.
   */
  held: boolean;
  /**
   * The position cannot be resumed from: it is older than what the feed keeps, or it is not one
   * this database wrote (a restore). The reader starts again from the page.
   */
  stale: boolean;
}

/** Where live events are kept and read. */
export interface LiveLog {
  /** The position of now: every event after it is yet to be read. */
  now(): Promise<string>;
  /**
   * Up to `limit` events after `after`, oldest first: all of them (scope null), or those of one
   * conversation or account (a stream catching up; its access was just checked, so changes to
   * people are left out).
   */
  read(after: Position, scope: LiveScope | null, limit: number): Promise<LiveRead>;
  /**
   * Someone follows these accounts live for at least `seconds` more: until then their changes
   * wake the listening processes (nobody is woken for an account nobody follows).
   */
  watch(accountIds: readonly number[], seconds: number): Promise<void>;
}
