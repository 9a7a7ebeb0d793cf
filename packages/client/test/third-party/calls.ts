import createClient from 'openapi-fetch';
import type { paths } from './conversations-api.ts';

/*
 * What an outside developer writes: a client generated from the served OpenAPI document
 * (openapi-typescript) and plain REST calls through openapi-fetch. The test type-checks this file.
 */

export async function callAllThree(baseUrl: string, token: string) {
  const api = createClient<paths>({ baseUrl: `${baseUrl}/api/v1`, headers: { Authorization: `Bearer ${token}` } });

  const created = await api.POST('/conversations/create_conversation', {
    body: { title: 'From a generated client', slug: 'generated-client', allow_search_engines: false },
  });
  if (!created.data) throw new Error(`create failed: ${created.error?.error}`);
  const slug: string = created.data.slug;

  const one = await api.GET('/conversations/get_conversation', { params: { query: { slug } } });
  const nice: string | undefined = one.data?.conversation_credated_time_nice;

  const page = await api.GET('/conversations/get_conversations', { params: { query: { page: 1 } } });
  const titles: string[] = page.data?.conversations.map((c) => c.title) ?? [];

  const refused = await api.POST('/conversations/create_conversation', { body: { slug } });
  const conflict: string | undefined = refused.error?.code;

  return {
    created: { status: created.response.status, slug },
    one: { status: one.response.status, id: one.data?.id, nice },
    page: { status: page.response.status, link: page.response.headers.get('link'), titles },
    refused: { status: refused.response.status, code: conflict },
  };
}
