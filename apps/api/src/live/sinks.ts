/*
 * Where a stream's bytes go: the body of its answer, or the connection itself. Either reports a
 * reader that takes nothing, and the stream is let go.
 */

/** Chunks waiting for a reader that does not take them: past this it is let go. */
export const SLOW_READER_CHUNKS = 256;
/** The same on a connection written directly: bytes its reader has not taken. */
const SLOW_READER_BYTES = 64 * 1024;

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
export class ControllerSink implements LiveSink {
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
