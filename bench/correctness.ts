import { isDeepStrictEqual } from 'node:util';
import { N, TOKEN } from './options.ts';
import type { Server } from './servers.ts';

/* Before any load: both servers answer a sample of requests identically. */

export const pick = (n: number) => 1 + Math.floor(Math.random() * n);
export const GET = (path: string) => ({ path, init: { headers: { authorization: `Bearer ${TOKEN}` } } });
export const POST = (body: unknown) => ({
  path: '/api/v1/conversations/create_conversation',
  init: {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  },
});

/** Fields that legitimately differ between two creates: their ids and the URLs built from them. */
export function normaliseCreated(body: Record<string, unknown>) {
  const { id: _id, slug: _s, conversation_url: _u, conversation_embed_url: _e, ...rest } = body;
  return rest;
}

export async function sameAnswers(a: Server, b: Server): Promise<number> {
  const samples = [
    GET('/api/v1/conversations/get_conversation'),
    GET('/api/v1/conversations/get_conversation?slug=BENCH-7'),
    GET(`/api/v1/conversations/get_conversation?title=bench%20conversation%20${pick(N)}`),
    GET('/api/v1/conversations/get_conversation?title=no%20such%20title'),
    GET('/api/v1/conversations/get_conversation?title=Bench%20conversation%203&slug=bench-3'),
    GET('/api/v1/conversations/get_conversations'),
    GET('/api/v1/conversations/get_conversations?page=100'),
    GET(`/api/v1/conversations/get_conversations?page=${pick(Math.ceil(N / 50))}`),
    GET(`/api/v1/conversations/get_conversations?page=${Math.ceil(N / 50) + 1}`),
  ];
  for (const s of samples) {
    const [x, y] = await Promise.all([fetch(a.base + s.path, s.init), fetch(b.base + s.path, s.init)]);
    const [bx, by] = await Promise.all([x.json(), y.json()]);
    if (x.status !== y.status || (x.ok && !isDeepStrictEqual(bx, by))) {
      throw new Error(
        `answers differ for ${s.path}:\n${a.name} ${x.status} ${JSON.stringify(bx).slice(0, 400)}\n${b.name} ${y.status} ${JSON.stringify(by).slice(0, 400)}`,
      );
    }
  }
  const create = POST({ title: 'Compared create', anyone_can_post: false });
  const [x, y] = await Promise.all([
    fetch(a.base + create.path, create.init),
    fetch(b.base + create.path, create.init),
  ]);
  const [cx, cy] = [
    normaliseCreated((await x.json()) as Record<string, unknown>),
    normaliseCreated((await y.json()) as Record<string, unknown>),
  ];
  if (x.status !== 201 || y.status !== 201 || !isDeepStrictEqual(cx, cy)) {
    throw new Error(`create answers differ:\n${JSON.stringify(cx)}\n${JSON.stringify(cy)}`);
  }
  return samples.length + 1;
}
