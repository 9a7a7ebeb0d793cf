/**
 * The floor of a live stream's memory, for `npm run bench`'s live section: plain node:http
 * holding each `text/event-stream` answer open after its first line, and nothing else. What it
 * costs a stream is what Node itself costs one connection with an open answer.
 */
import { createServer } from 'node:http';

createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  res.write('retry: 2000\n\n');
}).listen(Number(process.env.PORT), '127.0.0.1');
