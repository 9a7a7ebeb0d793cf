import { type ListenTarget, type LiveListener, listenLive } from '@convo/db';
import {
  changesAccess,
  formatPosition,
  inScope,
  isAfter,
  type LiveEvent,
  type LiveLog,
  type Position,
  parsePosition,
} from '@convo/domain';
import type { LiveStreamRequest, LiveStreams, OpenedStream } from '@convo/pages';
import type { Logger } from '../logger.ts';

/*
 * The live streams of one process (`text/event-stream`, see packages/pages' events routes). One
 * listening connection wakes the process when an account it has streams for changed; the process
 * then reads the feed once, from where it read last, and hands each event to the streams that
 * follow its conversation or account. A stream opened with a position first catches up from the
 * database, so a browser that reconnects (Last-Event-ID) misses nothing; and the listener, each
 * time it connects again, makes the process read what was written meanwhile.
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
/** Events a stream may catch up on; further behind, it starts again from its page. */
const CATCH_UP_MAX = 200;
/** Events read from the feed at once. */
const READ_BATCH = 1_000;
/** Chunks waiting for a reader that does not take them: past this it is let go. */
const SLOW_READER_CHUNKS = 256;
/** The same on a connection written directly: bytes its reader has not taken. */
const SLOW_READER_BYTES = 64 * 1024;
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

const encoder = new TextEncoder();
const PING = encoder.encode(':\n\n');
const RESET = encoder.encode('event: reset\ndata: {}\n\n');
const END = encoder.encode('event: end\ndata: {}\n\n');

/** What a page says of an event (its `event:` and `data:`). */
type Describe = LiveStreamRequest['describe'];

/**
 * An event as handed to the streams: its position, parsed once, and its bytes on the wire, made
 * once for every stream that describes it alike (each kind of page has one describe()).
 */
interface Dispatched {
  e: LiveEvent;
  at: Position;
  say(describe: Describe): Uint8Array | null;
}

function dispatched(e: LiveEvent): Dispatched {
  const at = parsePosition(e.position);
  if (!at) throw new Error(`a live event without a position: ${e.position}`);
  const said = new Map<Describe, Uint8Array | null>();
  return {
    e,
    at,
    say(describe) {
      let bytes = said.get(describe);
      if (bytes === undefined) {
        const told = describe(e);
        bytes = told
          ? encoder.encode(`id: ${e.position}\nevent: ${told.event}\ndata: ${JSON.stringify(told.data)}\n\n`)
          : null;
        said.set(describe, bytes);
      }
      return bytes;
    },
  };
}

/**
 * Where a stream's bytes go once someone takes them: the body of its answer (a reader of the
 * ReadableStream), or, where the server can write to the connection itself (Node), the
 * connection: a stream held open for hours then costs no ReadableStream, pending read or pipe.
 */
export interface LiveSink {
  write(bytes: Uint8Array): void;
  /** The reader has left this much untaken: let the stream go. */
  slow(): boolean;
  end(): void;
}

/** The body of a stream's answer, once a reader pulls it. */
class ControllerSink implements LiveSink {
  private readonly controller: ReadableStreamDefaultController<Uint8Array>;
  constructor(controller: ReadableStreamDefaultController<Uint8Array>) {
    this.controller = controller;
  }
  write(bytes: Uint8Array): void {
    this.controller.enqueue(bytes);
  }
  slow(): boolean {
    return (this.controller.desiredSize ?? 0) < -SLOW_READER_CHUNKS;
  }
  end(): void {
    try {
      this.controller.close();
    } catch {
      // Already closed by the reader going away.
    }
  }
}

/** What a connection's answer written directly offers (Node's ServerResponse, its head written). */
interface Connection {
  write(bytes: Uint8Array): boolean;
  end(): void;
  readonly writableLength: number;
}

/** A connection's answer as a stream's sink. */
export class ConnectionSink implements LiveSink {
  private readonly out: Connection;
  constructor(out: Connection) {
    this.out = out;
  }
  write(bytes: Uint8Array): void {
    this.out.write(bytes);
  }
  slow(): boolean {
    return this.out.writableLength > SLOW_READER_BYTES;
  }
  end(): void {
    this.out.end();
  }
}

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
  const RETRY = encoder.encode(`retry: ${retryMs}\n\n`);
  const streams = new Set<Stream>();
  const byAccount = new Map<number, Set<Stream>>();
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
  const bodies = new WeakMap<ReadableStream<Uint8Array>, Stream>();

  class Stream {
    readonly request: LiveStreamRequest;
    position: Position;
    /** Where the bytes go; until someone takes them, they wait in `pending`. */
    private sink: LiveSink | null = null;
    private pending: Uint8Array[] = [];
    /**
     * Events waiting while one before them is handled asynchronously (a check of the reader), or
     * while the stream catches up from the database; null when none wait.
     */
    private waiting: Dispatched[] | null = [];
    private catchingUp = true;
    private handling = false;
    private closed = false;
    lastCheck = Date.now();
    /** The last position told to the browser (an event's, or a heartbeat's). */
    private told: string | null = null;

    constructor(request: LiveStreamRequest, from: Position) {
      this.request = request;
      this.position = from;
    }

    /**
     * The answer's body: pulled only once read (high-water mark 0), so a server that takes the
     * stream to its connection instead never starts it.
     */
    body(): ReadableStream<Uint8Array> {
      const body = new ReadableStream<Uint8Array>(
        {
          pull: (controller) => {
            if (!this.sink) this.take(new ControllerSink(controller));
          },
          // The browser went away (the server cancels the body it can no longer send).
          cancel: () => this.close(),
        },
        { highWaterMark: 0 },
      );
      bodies.set(body, this);
      return body;
    }

    get taken(): boolean {
      return this.sink !== null;
    }

    /** From now on the bytes go to `sink`, those waiting first. */
    take(sink: LiveSink): void {
      this.sink = sink;
      for (const bytes of this.pending.splice(0)) sink.write(bytes);
      if (this.closed) sink.end();
    }

    write(bytes: Uint8Array): void {
      if (this.closed) return;
      if (!this.sink) {
        this.pending.push(bytes);
        if (this.pending.length <= SLOW_READER_CHUNKS) return;
      } else {
        this.sink.write(bytes);
        if (!this.sink.slow()) return;
      }
      logger.info({ clientIp: this.request.clientIp }, 'live stream let go: its reader takes nothing');
      this.close();
    }

    /** A live event from the feed (in order): handled now, or after what is waiting. */
    offer(d: Dispatched): void {
      if (this.closed || !inScope(d.e, this.request.scope)) return;
      if (this.waiting) this.waiting.push(d);
      else if (this.needsCheck(d.e)) {
        this.waiting = [d];
        void this.drain();
      } else this.tell(d);
    }

    /** Catches up from `from` (the position the browser had), then goes live. */
    async catchUp(): Promise<void> {
      if (cursor && !isAfter(cursor, this.position) && !isAfter(this.position, cursor)) {
        // Where the hub is: it hands this stream everything after, and reads now for what was
        // written since it last read (one read for many streams opening). A position ahead of
        // the hub's is read here too, where one this server never wrote is found out.
        this.catchingUp = false;
        read();
        await this.drain();
        return;
      }
      const missed = await log.read(this.position, this.request.scope, CATCH_UP_MAX);
      if (missed.stale || missed.events.length >= CATCH_UP_MAX) {
        // Too far behind to say what changed: the page starts again from what is there now.
        this.write(RESET);
        this.close();
        return;
      }
      const live = this.waiting ?? [];
      this.waiting = [...missed.events.map(dispatched), ...live];
      this.catchingUp = false;
      await this.drain();
    }

    /** Does this event need an answer from the database before it may be told (or the stream ended)? */
    private needsCheck(e: LiveEvent): boolean {
      return this.request.admits !== undefined || (changesAccess(e) && this.concerns(e));
    }

    /** Handles what waits, in order, then goes back to handling events as they come. */
    private async drain(): Promise<void> {
      if (this.handling || this.catchingUp) return;
      this.handling = true;
      try {
        for (let d = this.waiting?.shift(); d && !this.closed; d = this.waiting?.shift()) {
          if (!isAfter(d.at, this.position)) continue;
          if (changesAccess(d.e) && this.concerns(d.e)) {
            this.position = d.at;
            if (!(await this.recheck())) return;
            continue;
          }
          if (this.request.admits && !(await this.request.admits(d.e))) {
            this.position = d.at;
            continue;
          }
          this.tell(d);
        }
        this.waiting = null;
      } catch (err) {
        logger.error({ err }, 'a live stream failed; it is closed');
        this.close();
      } finally {
        this.handling = false;
      }
    }

    /** Tells the browser of one event (what the page says of it), if it is new to this stream. */
    private tell(d: Dispatched): void {
      if (!isAfter(d.at, this.position)) return;
      this.position = d.at;
      const bytes = d.say(this.request.describe);
      if (!bytes) return;
      this.told = d.e.position;
      this.write(bytes);
    }

    /** Is a change to who may read about this stream's reader? (A reader nobody knows has nothing to lose.) */
    private concerns(e: LiveEvent): boolean {
      return e.userId !== null && e.userId === this.request.userId;
    }

    /** Asks the page's rule again; a reader who may no longer read is told so and let go. */
    async recheck(): Promise<boolean> {
      this.lastCheck = Date.now();
      if (await this.request.stillAllowed()) return true;
      this.write(END);
      this.close();
      return false;
    }

    /** Keeps the connection alive; tells the browser how far it is when that moved. */
    heartbeat(hub: Position | null): void {
      // Only a stream with nothing waiting has had every event up to the hub's position.
      const idle = this.waiting === null && !this.handling;
      if (idle && hub && isAfter(hub, this.position)) this.position = hub;
      const at = formatPosition(this.position);
      if (!idle || at === this.told) {
        this.write(PING);
        return;
      }
      this.told = at;
      this.write(encoder.encode(`id: ${at}\n\n`));
    }

    /** Tells the browser to come back in a moment (to another replica), and ends. */
    leave(): void {
      this.write(RETRY);
      this.close();
    }

    close(): void {
      if (this.closed) return;
      this.closed = true;
      this.waiting = null;
      streams.delete(this);
      const mine = byAccount.get(this.request.scope.accountId);
      mine?.delete(this);
      if (mine?.size === 0) byAccount.delete(this.request.scope.accountId);
      const n = (perClient.get(this.request.clientIp) ?? 1) - 1;
      if (n > 0) perClient.set(this.request.clientIp, n);
      else perClient.delete(this.request.clientIp);
      this.sink?.end();
    }
  }

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
      let stream: Stream | undefined;
      try {
        if (cursor === null) cursor = parsePosition(await log.now());
        const from = parsePosition(request.after) ?? cursor;
        if (!from) throw new Error('the live feed has no position');
        stream = new Stream(request, from);
        streams.add(stream);
        const mine = byAccount.get(request.scope.accountId) ?? new Set<Stream>();
        mine.add(stream);
        byAccount.set(request.scope.accountId, mine);
        await watch(request.scope.accountId);
        stream.write(RETRY);
        await stream.catchUp();
      } catch (err) {
        if (stream) stream.close();
        else perClient.set(request.clientIp, Math.max(0, (perClient.get(request.clientIp) ?? 1) - 1));
        throw err;
      }
      return { body: stream.body() };
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

/** The process's one listening connection, waking `hub` (see @convo/db's live-listener.ts). */
export function listenForLive(hub: LiveHub, target: ListenTarget, logger: Logger): LiveListener {
  return listenLive(target, {
    notified: (payload) => hub.notified(payload),
    connected: () => {
      logger.info('listening for live events');
      hub.connected();
    },
    lost: (err) => {
      logger.warn({ err: err.message }, 'the live events listener lost its connection; polling until it is back');
      hub.lost();
    },
  });
}
