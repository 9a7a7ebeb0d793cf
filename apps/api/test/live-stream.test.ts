import {
  isAfter,
  type LiveEvent,
  type LiveEventKind,
  type LiveLog,
  type LiveRead,
  type Position,
  parsePosition,
} from '@convo/domain';
import type { LiveStreamRequest } from '@convo/pages';
import { describe, expect, it } from 'vitest';
import { dispatched, retryFrame } from '../src/live/framing.ts';
import type { LiveSink } from '../src/live/sinks.ts';
import { CATCH_UP_MAX, LiveStream, type StreamHub } from '../src/live/stream.ts';
import { createLogger } from '../src/logger.ts';

/*
 * One live stream on its own, against a feed held in memory: what a browser would read, in order,
 * once each, with catch-up, access checks and heartbeats. (live.test.ts walks the whole hub
 * through the app and the database.)
 */

const at = (p: string): Position => {
  const parsed = parsePosition(p);
  if (!parsed) throw new Error(`not a position: ${p}`);
  return parsed;
};

const event = (position: string, kind: LiveEventKind = 'posted', userId: number | null = 7): LiveEvent => ({
  position,
  kind,
  accountId: 1,
  conversationId: kind === 'signed_out' || kind === 'team_changed' ? null : 10,
  messageId: kind === 'posted' ? Number(position.split('.')[1]) : null,
  userId,
  internal: false,
});

/** A feed in memory; `gate` holds a read until the test lets it through. */
function feed(events: LiveEvent[], stale = false) {
  let gate: Promise<void> = Promise.resolve();
  const log: LiveLog = {
    now: async () => '1.0',
    async read(after, _scope, limit): Promise<LiveRead> {
      await gate;
      return { events: events.filter((e) => isAfter(at(e.position), after)).slice(0, limit), held: false, stale };
    },
    watch: async () => {},
  };
  return {
    log,
    hold() {
      let open = () => {};
      gate = new Promise((r) => {
        open = r;
      });
      return open;
    },
  };
}

/** What the browser reads: the frames written, as text. */
function reader() {
  const frames: string[] = [];
  const decoder = new TextDecoder();
  const sink: LiveSink = {
    write: (bytes) => {
      frames.push(decoder.decode(bytes));
    },
    slow: () => false,
    end: () => {
      frames.push('<end of stream>');
    },
  };
  return { sink, frames, told: () => frames.filter((f) => f.startsWith('id: ') && f.includes('event: ')) };
}

function stream(log: LiveLog, from: string, options: Partial<LiveStreamRequest> & { hubAt?: string } = {}) {
  const closed: LiveStream[] = [];
  let reads = 0;
  const hub: StreamHub = {
    log,
    logger: createLogger('silent'),
    position: () => (options.hubAt ? at(options.hubAt) : null),
    read: () => {
      reads += 1;
    },
    closed: (s) => closed.push(s),
    retry: retryFrame(2_000),
  };
  const request: LiveStreamRequest = {
    scope: { accountId: 1, conversationId: 10 },
    clientIp: '127.0.0.1',
    after: from,
    userId: 7,
    stillAllowed: async () => true,
    describe: (e) => ({ event: e.kind, data: { message: e.messageId } }),
    ...options,
  };
  const s = new LiveStream(request, at(from), hub);
  const r = reader();
  s.take(r.sink);
  return { s, r, closed, reads: () => reads };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('a live stream', () => {
  it('tells each event once, in feed order, and nothing at or before where it is', async () => {
    const { log } = feed([]);
    const { s, r } = stream(log, '5.1', { hubAt: '5.1' });
    await s.catchUp();
    for (const p of ['5.2', '5.1', '6.1', '5.2', '4.9']) s.offer(dispatched(event(p)));
    expect(r.told()).toEqual([
      'id: 5.2\nevent: posted\ndata: {"message":2}\n\n',
      'id: 6.1\nevent: posted\ndata: {"message":1}\n\n',
    ]);
  });

  it('catches up from the database first, then goes live, with nothing twice and nothing overtaking', async () => {
    const f = feed([event('2.1'), event('2.2'), event('3.1')]);
    const open = f.hold();
    const { s, r } = stream(f.log, '2.0', { hubAt: '3.1' });
    const catching = s.catchUp();
    // Live events arrive while the catch-up read is out: one it will also find, one after.
    s.offer(dispatched(event('3.1')));
    s.offer(dispatched(event('3.2')));
    expect(r.told()).toEqual([]);
    open();
    await catching;
    expect(r.told().map((f) => f.split('\n')[0])).toEqual(['id: 2.1', 'id: 2.2', 'id: 3.1', 'id: 3.2']);
  });

  it('starts the page again when it is too far behind, or its position is not the feed’s', async () => {
    const far = Array.from({ length: CATCH_UP_MAX }, (_, i) => event(`2.${i + 1}`));
    for (const f of [feed(far), feed([], true)]) {
      const { s, r, closed } = stream(f.log, '1.5', { hubAt: '9.9' });
      await s.catchUp();
      expect(r.frames).toEqual(['event: reset\ndata: {}\n\n', '<end of stream>']);
      expect(closed).toEqual([s]);
    }
  });

  it('holds what follows a change of access until the rule answers, then tells it in order', async () => {
    let answer = (_: boolean) => {};
    const asked = new Promise<boolean>((r) => {
      answer = r;
    });
    const { log } = feed([]);
    const { s, r } = stream(log, '5.0', { hubAt: '5.0', stillAllowed: () => asked });
    await s.catchUp();
    s.offer(dispatched(event('5.1')));
    s.offer(dispatched(event('5.2', 'member_removed', 7)));
    s.offer(dispatched(event('5.3')));
    await settle();
    expect(r.told().map((f) => f.split('\n')[0])).toEqual(['id: 5.1']);
    answer(true);
    await settle();
    expect(r.told().map((f) => f.split('\n')[0])).toEqual(['id: 5.1', 'id: 5.3']);
  });

  it('ends, telling the browser so, when the rule says the reader may no longer read; nothing after it is told', async () => {
    const { log } = feed([]);
    const { s, r, closed } = stream(log, '5.0', { hubAt: '5.0', stillAllowed: async () => false });
    await s.catchUp();
    s.offer(dispatched(event('5.1', 'signed_out', 7)));
    s.offer(dispatched(event('5.2')));
    await settle();
    expect(r.frames.slice(-2)).toEqual(['event: end\ndata: {}\n\n', '<end of stream>']);
    expect(r.told()).toEqual([]);
    expect(closed).toEqual([s]);
  });

  it('tells another reader’s change without asking the rule, and nothing of other conversations', async () => {
    const { log } = feed([]);
    let checks = 0;
    const { s, r } = stream(log, '5.0', {
      hubAt: '5.0',
      stillAllowed: async () => {
        checks += 1;
        return true;
      },
    });
    await s.catchUp();
    s.offer(dispatched(event('5.1', 'member_removed', 8)));
    s.offer(dispatched({ ...event('5.2'), conversationId: 11 }));
    s.offer(dispatched(event('5.3')));
    await settle();
    expect(checks).toBe(0);
    expect(r.told().map((f) => f.split('\n')[0])).toEqual(['id: 5.1', 'id: 5.3']);
  });

  it('moves an idle reader to where the process is on a heartbeat, and only pings when that is told', async () => {
    const { log } = feed([]);
    const { s, r } = stream(log, '5.0', { hubAt: '5.0' });
    await s.catchUp();
    s.heartbeat(at('7.3'));
    s.heartbeat(at('7.3'));
    expect(r.frames.slice(-2)).toEqual(['id: 7.3\n\n', ':\n\n']);
  });

  it('keeps what it writes until someone takes the stream, then hands it over first', async () => {
    const { log } = feed([]);
    const hub: StreamHub = {
      log,
      logger: createLogger('silent'),
      position: () => at('5.0'),
      read: () => {},
      closed: () => {},
      retry: retryFrame(1_000),
    };
    const request: LiveStreamRequest = {
      scope: { accountId: 1, conversationId: 10 },
      clientIp: '127.0.0.1',
      after: null,
      userId: null,
      stillAllowed: async () => true,
      describe: (e) => ({ event: e.kind, data: {} }),
    };
    const s = new LiveStream(request, at('5.0'), hub);
    s.write(hub.retry);
    await s.catchUp();
    s.offer(dispatched(event('5.1')));
    const r = reader();
    s.take(r.sink);
    s.leave();
    expect(r.frames).toEqual([
      'retry: 1000\n\n',
      'id: 5.1\nevent: posted\ndata: {}\n\n',
      'retry: 1000\n\n',
      '<end of stream>',
    ]);
  });
});
