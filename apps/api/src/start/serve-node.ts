import {
  createServer,
  IncomingMessage,
  type RequestListener,
  type Server,
  ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { errorBody } from '@convo/router';
import { getRequestListener, type Http2Bindings, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { MikroORM } from '@mikro-orm/core';
import type { App } from '../http/app.ts';
import { ConnectionSink } from '../live/sinks.ts';
import type { Logger } from '../logger.ts';
import { sendFile } from '../media/send-file.ts';
import { logCannotListen } from './listen-error.ts';

/** After SIGTERM: requests in flight get this long to finish before their connections are cut. */
const DRAIN_MS = 8_000;
/** After SIGTERM, keep-alive connections may still bring a request this long before idle ones are closed. */
const IDLE_GRACE_MS = 1_000;
/**
 * An answer that closes a connection whose request is still arriving: what follows it is read this
 * long, … (and a refusal of Node's parser waits this long for the client to close its side)
 */
const LINGER_MS = 2_000;
/** … or up to this much, and dropped, before the connection is cut. */
const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * Serves the app on Node until SIGTERM or SIGINT, then stops without breaking a request it
 * accepted: no new connections; answers carry `Connection: close`, so each busy connection ends
 * after its next answer; idle ones are closed only after a grace (closing one at once races a
 * request the client may be writing on it, which it would see as a reset); then the pool closes.
 */
export function serveOnNode(
  app: App,
  orm: MikroORM,
  listen: { host: string; port: number; logger: Logger; sendTimeoutMs?: number; onListen?: (port: number) => void },
): Promise<void> {
  const { logger } = listen;
  const server = nodeServer(app, { hostname: listen.host, sendTimeoutMs: listen.sendTimeoutMs });
  server.listen(listen.port, listen.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : listen.port;
    logger.info({ url: `http://${listen.host}:${port}`, pid: process.pid }, 'listening');
    listen.onListen?.(port);
  });
  server.on('error', (err) => {
    if (!server.listening) {
      logCannotListen(logger, listen, err);
      logger.flush(() => process.exit(1));
      return;
    }
    // Once listening, an error the server reports (a failed accept) is not about its port: it is
    // logged, and the server goes on serving the requests in flight.
    logger.error({ err }, 'server error');
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket));
  // A stray rejection is a bug to log, not a reason to drop every request in flight.
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));

  return new Promise((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'stopping: no new connections; finishing the requests in flight');
      app.drain();
      let idle: ReturnType<typeof setInterval> | undefined;
      const grace = setTimeout(() => {
        idle = setInterval(() => server.closeIdleConnections(), 50);
      }, IDLE_GRACE_MS);
      const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(grace);
        clearInterval(idle);
        clearTimeout(cut);
        clearTimeout(deadline);
        void app
          .settle()
          .then(() => orm.close())
          .catch((err: unknown) => logger.error({ err }, 'closing the database pool failed'))
          .finally(() => logger.flush(() => resolve()));
      };
      // A socket the HTTP server no longer tracks (one Node's parser refused) is not cut by
      // closeAllConnections; whatever is still open by then does not keep the process alive.
      const deadline = setTimeout(() => {
        logger.warn({ signal }, 'connections still open after the drain: stopping without them');
        finish();
      }, DRAIN_MS + IDLE_GRACE_MS);
      // net.Server's close stops listening and waits for the connections; http.Server's would
      // also close the idle ones at once.
      NetServer.prototype.close.call(server, finish);
    };
    process.once('SIGINT', () => stop('SIGINT')).once('SIGTERM', () => stop('SIGTERM'));
  });
}

/**
 * The app as Node's HTTP server, not yet listening: each request answered by the app through
 * @hono/node-server (nodeFetch), but a played beacon, which is taken before it (withBeacons).
 */
export function nodeServer(app: App, options: { hostname?: string; sendTimeoutMs?: number } = {}): Server {
  const listener = getRequestListener(nodeFetch(app, options.sendTimeoutMs), { hostname: options.hostname });
  return createServer(withBeacons(app, listener));
}

/**
 * Node's request listener with the played beacon taken before @hono/node-server's: a beacon comes
 * as often as pages are viewed, and its checks read a few of its headers (App.takeBeacon), where
 * the web stack would build a Request, route it twice and build a Response, for a 204 without a
 * body. What it does not keep (a refusal, a failure, any other request) goes on to the listener,
 * which answers it as the app does on every runtime.
 */
function withBeacons(app: App, listener: RequestListener): RequestListener {
  return (req, res) => {
    const bodiless = req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] ?? '0') === '0';
    if (req.method !== 'POST' || !req.url?.includes('/played?') || !bodiless) {
      listener(req, res);
      return;
    }
    const head = { headers: { get: (name: string) => headerOf(req, name) } };
    void app.takeBeacon(req.url, head, { clientIp: req.socket.remoteAddress }).then(
      (headers) => (headers ? res.writeHead(204, headers).end() : listener(req, res)),
      () => listener(req, res),
    );
  };
}

/** A request's header as a Request's headers would give it: several of one name joined; null for none. */
function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The app as @hono/node-server's fetch callback, with what only Node can do: answers a client
 * takes nothing of are cut off, and live streams are written to their connections directly.
 */
function nodeFetch(app: App, sendTimeoutMs = 15_000) {
  // A client that never reads its answer would hold the answer's memory and its socket forever:
  // an answer it takes nothing of for sendTimeoutMs is cut off. A long answer (a recording) goes
  // on as long as the client keeps taking it: each time the socket's buffer drains, the clock
  // starts again.
  return async (req: Request, env: HttpBindings | Http2Bindings) => {
    const res = await app.fetch(req, { clientIp: env.incoming.socket.remoteAddress });
    const out = env.outgoing;
    // A live stream is open for as long as its reader wants it; the hub lets go of one whose
    // reader stops taking what it is sent. Its events are written to the connection itself: a
    // body piped through a ReadableStream would hold a reader, a pending read and the pipe's
    // closures for every one of thousands of idle streams.
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
      if (!res.body || !(out instanceof ServerResponse)) return res;
      const gone = app.attachLive(res.body, () => {
        out.writeHead(res.status, [...res.headers].flat());
        return new ConnectionSink(out);
      });
      if (!gone) return res;
      out.on('close', gone);
      // The browser may have left while its stream was opening: that close has been already.
      if (env.incoming.socket.destroyed) gone();
      return RESPONSE_ALREADY_SENT;
    }
    const incoming = env.incoming;
    if (incoming instanceof IncomingMessage && res.headers.get('connection') === 'close' && !incoming.complete) {
      void answerThenLinger(res, incoming);
      return RESPONSE_ALREADY_SENT;
    }
    let timer = setTimeout(() => out.destroy(), sendTimeoutMs);
    const taken = () => {
      clearTimeout(timer);
      timer = setTimeout(() => out.destroy(), sendTimeoutMs);
    };
    out.on('drain', taken);
    out.once('close', () => {
      clearTimeout(timer);
      out.off('drain', taken);
    });
    // A recording on disk goes from its file to the connection, not through the body's stream.
    // Only a recording's bytes answer with Accept-Ranges: any other answer's body is left alone
    // (asking @hono/node-server's Response for it turns its direct write of a string into a stream).
    const file =
      out instanceof ServerResponse && res.headers.get('accept-ranges') === 'bytes' && res.body
        ? app.takeFile(res.body)
        : null;
    if (file && out instanceof ServerResponse) {
      out.writeHead(res.status, [...res.headers].flat());
      void sendFile(out, file, taken);
      return RESPONSE_ALREADY_SENT;
    }
    return res;
  };
}

/**
 * An answer that closes the connection while its request's body is still arriving (a body over
 * the limit, a refused recording): Node would destroy the socket as soon as the answer is
 * written, and what the client goes on sending would then meet a closed socket, which the kernel
 * answers with a reset, and most clients drop an answer they had not read yet when one comes
 * (RFC 9112 §9.6, "the TCP reset problem"). So the answer is written here, the sending side is
 * closed, and what still arrives is read and dropped until the client closes its side too, or
 * for LINGER_MS or LINGER_BYTES at most: nginx's lingering close.
 */
async function answerThenLinger(res: Response, incoming: IncomingMessage): Promise<void> {
  const socket = incoming.socket;
  const body = Buffer.from(await res.arrayBuffer());
  const head = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`];
  for (const [name, value] of res.headers) if (name !== 'content-length') head.push(`${name}: ${value}`);
  head.push(`content-length: ${body.byteLength}`, '', '');
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  let dropped = 0;
  // The app stopped reading the body: the reader it had (a web stream over this message) would
  // hold what follows, and hold the message paused, so it lets go of the data here.
  incoming.removeAllListeners('data');
  incoming.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > LINGER_BYTES) socket.destroy();
  });
  incoming.resume();
  socket.once('close', () => clearTimeout(cut));
  socket.once('end', () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.end(Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), body]));
}

/**
 * What Node's HTTP parser refuses (a malformed request, headers too large, a request that did not
 * arrive in time) gets the JSON error body too, where the connection can still carry it.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, reason] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? ([431, 'header_too_large', 'Request Header Fields Too Large'] as const)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ([408, 'request_timeout', 'Request Timeout'] as const)
        : ([400, 'bad_request', 'Bad Request'] as const);
  const body = JSON.stringify(errorBody(code));
  // The answer ends this side; a client that keeps its own side open holds the socket no longer.
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(cut));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
  );
}
