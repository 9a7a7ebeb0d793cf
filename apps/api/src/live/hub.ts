import { formatPosition, type LiveLog, type Position, parsePosition } from '@convo/domain';
import type { LiveStreams, OpenedStream } from '@convo/pages';
import type { Logger } from '../logger.ts';
import { dispatched, retryFrame } from './framing.ts';
import type { LiveSink } from './sinks.ts';
import { LiveStream, type StreamHub } from './stream.ts';

/*
 * The live streams of one process (`text/event-stream`, see packages/pages' events routes). One
 * listening connection wakes the process when an account it has streams for changed; the process
 * then reads the feed once, from where it read last, and hands each event to the streams that
 * follow its conversation or account. A stream opened with a position first catches up from the
 * database, so a browser that reconnects (Last-Event-ID) misses nothing; and the listener, each
 * time it connects again, makes the process read what was written meanwhile. A stream's own
 * state and order live in stream.ts, its bytes in framing.ts and sinks.ts.
 */

export interface LiveOptions {
  /** Streams one client address may hold at once (past it: 429). */
  perClient: number;
  /** Streams this process holds at most (past it: 503, so a balancer tries another replica). */
  max: number;
  /**
   * Streams of one account's site this process holds at most, whatever the addresses they come
   * from (past it: 503), so no account's visitors take a process whole; unset: `max`.
   */
  perAccount?: number;
  /** How often an idle stream is sent something, so proxies and the browser know it is alive. */
  heartbeatMs?: number;
  /** How often a stream's reader is asked the page's rule again, whatever happened. */
  recheckMs?: number;
  /** What a browser is told to wait before it reconnects (the `retry:` hint). */
  retryMs?: number;
}

/** Live streams a process holds unless configured otherwise (LIVE_STREAMS_PER_CLIENT, LIVE_STREAMS_MAX, LIVE_STREAMS_PER_ACCOUNT). */
export const DEFAULT_LIVE: LiveOptions = { perClient: 20, max: 10_000, perAccount: 5_000 };

/** Streams whose reader is asked again in one heartbeat round, at most. */
const RECHECKS_A_ROUND = 100;
/** Events read from the feed at once. */
const READ_BATCH = 1_000;
/** How soon an event held behind an older open transaction is looked for again. */
const HELD_RETRY_MS = 25;
/** How often the feed is read without a word from the listener (a backstop; 1 s while it is down). */
const POLL_MS = 10_000;
const POLL_DOWN_MS = 1_000;
/**
 * How long an account's watch lasts (a write to an account nobody watches wakes no process);
 * renewed every third of it while this process holds streams of the account.
 */
const WATCH_SECONDS = 90;
/**
 * After an account is first watched, the feed is read again at these delays: a write whose
 * trigger looked before the watch existed wakes nobody, and may commit after the stream's first
 * read (the backstop would find it too, later).
 */
const SETTLE_READS_MS = [25, 250, 1_000];

export interface LiveHub extends LiveStreams {
  /**
   * Takes a stream's answer off its body (which must not have been read): `open` is called (it
   * starts the answer) and from then on the stream's bytes go to the sink it returns. Gives what
   * to call when the reader goes away; null when `body` is not an unread stream of this hub's
   * (then `open` is not called).
   */
  attach(body: ReadableStream<Uint8Array>, open: () => LiveSink): (() => void) | null;
  /** The listener connected (again): read whatever was written meanwhile. */
  connected(): void;
  /** The listener lost its connection: read by polling until it is back. */
  lost(): void;
  /** A notification: the accounts that changed ('*': many). */
  notified(payload: string): void;
  /** Open streams and whether the listener listens, for /metrics. */
  stats(): { streams: number; listening: boolean };
  /** Stopping: every stream is told to come back in a moment (to another replica) and closed. */
  drain(): void;
  close(): void;
}

export function createLiveHub(log: LiveLog, options: LiveOptions, logger: Logger): LiveHub {
  const retryMs = options.retryMs ?? 2_000;
  const streams = new Set<LiveStream>();
  const byAccount = new Map<number, Set<LiveStream>>();
  const perClient = new Map<string, number>();
  /**
   * Where the feed was read up to: every event before it has been handed to the streams. With no
   * stream open it is only kept fresh (each backstop round), for the pages rendered meanwhile to
   * name; null until first known.
   */
  let cursor: Position | null = null;
  /** The feed could not be read last time (said once in the log, not every round). */
  let failing = false;
  let reading = false;
  let again = false;
  let heldTimer: ReturnType<typeof setTimeout> | undefined;
  let listening = false;
  let draining = false;
  let lastRead = 0;
  /** When this process last wrote each account's watch. */
  const watched = new Map<number, number>();
  const settling = new Set<ReturnType<typeof setTimeout>>();

  /** Makes sure changes to the account wake the listeners (before a stream of it reads the feed). */
  async function watch(accountId: number): Promise<void> {
    const at = watched.get(accountId);
    if (at !== undefined && Date.now() - at < (WATCH_SECONDS * 1000) / 3) return;
    await log.watch([accountId], WATCH_SECONDS);
    watched.set(accountId, Date.now());
    if (at !== undefined) return;
    for (const ms of SETTLE_READS_MS) {
      const timer = setTimeout(() => {
        settling.delete(timer);
        read();
      }, ms);
      timer.unref();
      settling.add(timer);
    }
  }

  /**
   * Each stream by its answer's body, which a server may take it off before reading it. The body
   * is held by the answer alone: a stream that is written to its connection directly lets it go.
   */
  const bodies = new WeakMap<ReadableStream<Uint8Array>, LiveStream>();

  /** What each stream is given of this process. */
  const hub: StreamHub = {
    log,
    logger,
    position: () => cursor,
    read: () => read(),
    retry: retryFrame(retryMs),
    closed(stream) {
      streams.delete(stream);
      const mine = byAccount.get(stream.request.scope.accountId);
      mine?.delete(stream);
      if (mine?.size === 0) byAccount.delete(stream.request.scope.accountId);
      const n = (perClient.get(stream.request.clientIp) ?? 1) - 1;
      if (n > 0) perClient.set(stream.request.clientIp, n);
      else perClient.delete(stream.request.clientIp);
    },
  };

  /** Reads the feed from the cursor until nothing more is readable, handing each event out. */
  function read(): void {
    if (reading) {
      again = true;
      return;
    }
    lastRead = Date.now();
    reading = true;
    void (async () => {
      do {
        again = false;
        if (streams.size === 0 || cursor === null) {
          // Nothing to hand out: the position moves to now, unless a stream opened meanwhile
          // (it catches up from its own position; the hub reads on from where it was).
          const now = parsePosition(await log.now());
          if (streams.size === 0 || cursor === null) cursor = now;
          continue;
        }
        const result = await log.read(cursor, null, READ_BATCH);
        for (const e of result.events) {
          const d = dispatched(e);
          cursor = d.at;
          for (const s of byAccount.get(e.accountId) ?? []) s.offer(d);
        }
        if (result.events.length === READ_BATCH) again = true;
        else if (result.held) {
          clearTimeout(heldTimer);
          heldTimer = setTimeout(read, HELD_RETRY_MS);
        }
      } while (again);
      if (failing) logger.info('the live feed is read again');
      failing = false;
    })()
      .catch((err: unknown) => {
        if (!failing) logger.warn({ err: (err as Error).message }, 'reading the live feed failed; trying again');
        failing = true;
        again = false;
        clearTimeout(heldTimer);
        heldTimer = setTimeout(read, POLL_DOWN_MS);
      })
      .finally(() => {
        reading = false;
        if (again) read();
      });
  }

  // Without the listener the feed is polled; with it, read now and then anyway (a backstop).
  const backstop = setInterval(() => {
    if ((!listening && streams.size > 0) || Date.now() - lastRead > POLL_MS) read();
  }, POLL_DOWN_MS);
  backstop.unref();
  read();

  // The watches of the accounts this process holds streams of, renewed together.
  const renewal = setInterval(
    () => {
      for (const id of watched.keys()) if (!byAccount.has(id)) watched.delete(id);
      const accounts = [...byAccount.keys()];
      log.watch(accounts, WATCH_SECONDS).then(
        () => {
          const now = Date.now();
          for (const id of accounts) watched.set(id, now);
        },
        (err: unknown) => logger.warn({ err: (err as Error).message }, 'renewing the live watches failed'),
      );
    },
    (WATCH_SECONDS * 1000) / 3,
  );
  renewal.unref();

  // Each round also asks the rule again of the known readers not asked for a while (a session
  // can end by its time alone), a bounded number a round, so that streams opened together do not
  // ask all at once. A reader nobody knows can lose nothing.
  const heartbeat = setInterval(() => {
    const now = Date.now();
    let asked = 0;
    for (const s of streams) {
      s.heartbeat(cursor);
      const due =
        (s.request.userId !== null || s.request.passHolder === true) &&
        now - s.lastCheck > (options.recheckMs ?? 5 * 60_000);
      if (due && asked++ < RECHECKS_A_ROUND) void s.recheck().catch(() => s.close());
    }
  }, options.heartbeatMs ?? 25_000);
  heartbeat.unref();

  return {
    position: () => (cursor ? formatPosition(cursor) : null),

    attach(body, open) {
      const stream = bodies.get(body);
      if (!stream || stream.taken) return null;
      stream.take(open());
      return () => stream.close();
    },

    async open(request): Promise<OpenedStream> {
      if (draining || streams.size >= options.max) {
        return {
          refused: 503,
          retryAfterSeconds: Math.ceil(retryMs / 1000),
          reason: 'This server holds all the live streams it can.',
        };
      }
      const ofAccount = byAccount.get(request.scope.accountId)?.size ?? 0;
      if (ofAccount >= (options.perAccount ?? options.max)) {
        return {
          refused: 503,
          retryAfterSeconds: Math.ceil(retryMs / 1000),
          reason: 'This site has all the live streams it may hold here.',
        };
      }
      const held = perClient.get(request.clientIp) ?? 0;
      if (held >= options.perClient) {
        return { refused: 429, retryAfterSeconds: 30, reason: 'Too many live streams are open from your address.' };
      }
      perClient.set(request.clientIp, held + 1);
      let stream: LiveStream | undefined;
      try {
        if (cursor === null) cursor = parsePosition(await log.now());
        const from = parsePosition(request.after) ?? cursor;
        if (!from) throw new Error('the live feed has no position');
        stream = new LiveStream(request, from, hub);
        streams.add(stream);
        const mine = byAccount.get(request.scope.accountId) ?? new Set<LiveStream>();
        mine.add(stream);
        byAccount.set(request.scope.accountId, mine);
        await watch(request.scope.accountId);
        stream.write(hub.retry);
        await stream.catchUp();
      } catch (err) {
        if (stream) stream.close();
        else perClient.set(request.clientIp, Math.max(0, (perClient.get(request.clientIp) ?? 1) - 1));
        throw err;
      }
      const body = stream.body();
      bodies.set(body, stream);
      return { body };
    },

    connected() {
      listening = true;
      read();
    },
    lost() {
      listening = false;
    },
    notified(payload) {
      if (payload === '*' || payload.split(',').some((id) => byAccount.has(Number(id)))) read();
    },
    stats: () => ({ streams: streams.size, listening }),
    drain() {
      draining = true;
      for (const s of streams) s.leave();
    },
    close() {
      clearInterval(heartbeat);
      clearInterval(backstop);
      clearInterval(renewal);
      for (const timer of settling) clearTimeout(timer);
      clearTimeout(heldTimer);
      for (const s of streams) s.close();
    },
  };
}
