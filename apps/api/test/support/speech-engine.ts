import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

/*
 * A stand-in speech engine on 127.0.0.1 that speaks OpenAI's transcription protocol (a multipart
 * `file`, `model`, `response_format`, …; a JSON answer), records what it was sent, and answers as
 * the test says.
 */

export interface Received {
  path: string;
  authorization: string | undefined;
  fields: Record<string, string>;
  file: { name: string; type: string; bytes: Buffer } | null;
}

/** An engine answering each request as `answer` says, after reading the form. */
export async function engine(answer: (got: Received, res: ServerResponse) => void) {
  const received: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const got: Received = { path: req.url ?? '', authorization: req.headers.authorization, fields: {}, file: null };
    const form = busboy({ headers: req.headers });
    form.on('field', (name, value) => {
      got.fields[name] = value;
    });
    form.on('file', (_name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        got.file = { name: info.filename ?? '', type: info.mimeType, bytes: Buffer.concat(chunks) };
      });
    });
    form.on('close', () => {
      received.push(got);
      answer(got, res);
    });
    req.pipe(form);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A JSON answer. */
export const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
};
