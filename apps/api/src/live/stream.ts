import {
  changesAccess,
  formatPosition,
  inScope,
  isAfter,
  type LiveEvent,
  type LiveLog,
  type Position,
} from '@convo/domain';
import type { LiveStreamRequest } from '@convo/pages';
import type { Logger } from '../logger.ts';
import { type Dispatched, dispatched, END, PING, positionFrame, RESET } from './framing.ts';
import { ControllerSink, type LiveSink, SLOW_READER_CHUNKS } from './sinks.ts';

/*
 * One live stream: the events of its scope, in feed order, each told once; those that change who
 * may read wait for the page's rule, and those after them wait too, so nothing overtakes. It
 * catches up from the database before it goes live. What it needs of its process is passed in
 * (`StreamHub`): the feed, where the process has read it to, and who to tell when it ends.
 */

/** Events a stream may catch up on; further behind, it starts again from its page. */
export const CATCH_UP_MAX = 200;

/** What a stream needs of the process that holds it. */
export interface StreamHub {
  log: LiveLog;
  logger: Logger;
  /** Where the process has read the feed up to (every event before it handed out); null until known. */
  position(): Position | null;
  /** Read the feed now, for what was written since the process last read. */
  read(): void;
  /** The stream ended: the process lets it go. */
  closed(stream: LiveStream): void;
  /** The `retry:` hint a stream that leaves ends with. */
  retry: Uint8Array;
}

export class LiveStream {
  readonly request: LiveStreamRequest;
  private readonly hub: StreamHub;
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

  constructor(request: LiveStreamRequest, from: Position, hub: StreamHub) {
    this.request = request;
    this.position = from;
    this.hub = hub;
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
    this.hub.logger.info({ clientIp: this.request.clientIp }, 'live stream let go: its reader takes nothing');
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
    const cursor = this.hub.position();
    if (cursor && !isAfter(cursor, this.position) && !isAfter(this.position, cursor)) {
      // Where the hub is: it hands this stream everything after, and reads now for what was
      // written since it last read (one read for many streams opening). A position ahead of
      // the hub's is read here too, where one this server never wrote is found out.
      this.catchingUp = false;
      this.hub.read();
      await this.drain();
      return;
    }
    const missed = await this.hub.log.read(this.position, this.request.scope, CATCH_UP_MAX);
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
      this.hub.logger.error({ err }, 'a live stream failed; it is closed');
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
    this.write(positionFrame(at));
  }

  /** Tells the browser to come back in a moment (to another replica), and ends. */
  leave(): void {
    this.write(this.hub.retry);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.waiting = null;
    this.hub.closed(this);
    this.sink?.end();
  }
}
