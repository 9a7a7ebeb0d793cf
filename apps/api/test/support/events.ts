import type { LiveListener } from '@convo/db';
import { listenForLive } from '../../src/live/listener.ts';
import { createLogger } from '../../src/logger.ts';
import type { Harness } from './harness.ts';

/*
 * Live streams as a browser's EventSource reads them: the `text/event-stream` parsed into events
 * (the `id:`, `event:`, `data:` and `retry:` fields of each block), for tests to wait on.
 */

export interface StreamEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  /** A block with no field but a comment: a heartbeat. */
  comment?: boolean;
}

export class EventStream {
  readonly status: number;
  readonly headers: Headers;
  readonly events: StreamEvent[] = [];
  ended = false;
  private taken = 0;
  private reader: ReadableStreamDefaultReader<string> | undefined;
  private readonly done: Promise<void>;

  constructor(res: Response) {
    this.status = res.status;
    this.headers = res.headers;
    this.done = this.pump(res);
  }

  private async pump(res: Response) {
    if (!res.body) {
      this.ended = true;
      return;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    this.reader = reader;
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const e: StreamEvent = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) e.comment = true;
            const m = /^(id|event|data|retry): ?(.*)$/.exec(line);
            if (m) e[m[1] as 'id' | 'event' | 'data' | 'retry'] = m[2] ?? '';
          }
          this.events.push(e);
        }
      }
    } catch {
      // Cancelled by the test.
    } finally {
      this.ended = true;
    }
  }

  /** The next event (after those already taken) that `matches`, within `ms`. */
  async next(matches: (e: StreamEvent) => boolean = (e) => e.event !== undefined, ms = 5_000): Promise<StreamEvent> {
    const deadline = Date.now() + ms;
    for (;;) {
      for (let i = this.taken; i < this.events.length; i++) {
        const e = this.events[i] as StreamEvent;
        if (matches(e)) {
          this.taken = i + 1;
          return e;
        }
      }
      if (this.ended && this.taken >= this.events.length) throw new Error('the stream ended');
      if (Date.now() > deadline) throw new Error(`no such event within ${ms} ms: ${JSON.stringify(this.events)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** The next event named `name`, with its data parsed. */
  async named(name: string, ms?: number): Promise<{ id?: string; data: Record<string, unknown> }> {
    const e = await this.next((x) => x.event === name, ms);
    return { id: e.id, data: JSON.parse(e.data ?? '{}') };
  }

  /** Resolves once the server has ended the stream. */
  async closed(ms = 5_000): Promise<void> {
    await Promise.race([
      this.done,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the stream stayed open')), ms)),
    ]);
  }

  /** The browser goes away: the body is cancelled, as a server does when its connection closes. */
  close(): void {
    void this.reader?.cancel().catch(() => {});
  }
}

/** Opens `url` on the harness's app as an EventSource would (with these headers: a cookie, Last-Event-ID). */
export async function openStream(h: Harness, url: string, headers: Record<string, string> = {}) {
  const res = await h.app.fetch(new Request(url, { headers: { accept: 'text/event-stream', ...headers } }));
  return new EventStream(res);
}

/** The process's listener, as the server starts it, on the harness's database. */
export function listen(h: Harness): LiveListener {
  return listenForLive(
    h.services.live,
    h.db.listenUrl ? { kind: 'postgres', url: h.db.listenUrl } : { kind: 'embedded', em: h.db.orm.em },
    createLogger('silent'),
  );
}
