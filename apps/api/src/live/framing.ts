import { type LiveEvent, type Position, parsePosition } from '@convo/domain';
import type { LiveStreamRequest } from '@convo/pages';

/*
 * The bytes of a live stream (`text/event-stream`): comments that keep it alive, the events a page
 * describes, positions and the retry hint. Each event's bytes are made once for every stream that
 * describes it alike.
 */

const encoder = new TextEncoder();
export const PING = encoder.encode(':\n\n');
export const RESET = encoder.encode('event: reset\ndata: {}\n\n');
export const END = encoder.encode('event: end\ndata: {}\n\n');

/** How long a browser should wait before it reconnects. */
export const retryFrame = (ms: number): Uint8Array => encoder.encode(`retry: ${ms}\n\n`);

/** How far the browser is (a heartbeat that moved its position). */
export const positionFrame = (position: string): Uint8Array => encoder.encode(`id: ${position}\n\n`);

/** What a page says of an event (its `event:` and `data:`). */
export type Describe = LiveStreamRequest['describe'];

/**
 * An event as handed to the streams: its position, parsed once, and its bytes on the wire, made
 * once for every stream that describes it alike (each kind of page has one describe()).
 */
export interface Dispatched {
  e: LiveEvent;
  at: Position;
  say(describe: Describe): Uint8Array | null;
}

export function dispatched(e: LiveEvent): Dispatched {
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
