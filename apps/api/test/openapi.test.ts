import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, call, type Harness, openHarness } from './support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await openHarness();
});
afterAll(async () => h?.close());

describe('the OpenAPI document', () => {
  it('is served without a token and matches the committed contract (apps/api/openapi.json)', async () => {
    const r = await call(h, new Request(`${BASE}/api/v1/openapi.json`));
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    // Regenerate after an intended change with: npx vitest run apps/api/test/openapi.test.ts -u
    await expect(`${JSON.stringify(r.body, null, 2)}\n`).toMatchFileSnapshot('../openapi.json');
  });

  it('tells the truth the generator cannot: statuses, error bodies, auth, content types', async () => {
    const doc = (await call(h, new Request(`${BASE}/api/v1/openapi.json`))).body;
    const create = doc.paths['/conversations/create_conversation'].post;
    expect(Object.keys(create.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '408',
      '409',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(create.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
    expect(Object.keys(create.requestBody.content).sort()).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
    expect(create.requestBody.required).toBe(false);
    expect(create.responses['409'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    const get = doc.paths['/conversations/get_conversation'].get;
    expect(Object.keys(get.responses).sort()).toEqual(['200', '304', '401', '404', '422', '429', '500', '503']);
    expect(Object.keys(get.responses['200'].headers)).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Conversation-Matched',
      'ETag',
      'Cache-Control',
    ]);
    expect(Object.keys(get.responses['304'].headers)).toEqual(['ETag', 'Cache-Control']);
    expect(get.parameters).toContainEqual(expect.objectContaining({ name: 'If-None-Match', in: 'header' }));
    expect(get.responses['429'].headers['Retry-After']).toBeDefined();
    expect(get.security).toEqual([{ ApiToken: [] }, { BearerToken: [] }]);
    expect(doc.components.securitySchemes.ApiToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
    });
    expect(Object.keys(doc.components.schemas).filter((n) => n.startsWith('error.'))).toEqual([]);
    for (const op of [create, get, doc.paths['/conversations/get_conversations'].get]) {
      const ok = op.responses['200'] ?? op.responses['201'];
      expect(ok.content['application/json'].example).toBeDefined();
    }
  });

  it('documents exactly the members each operation returns', async () => {
    const doc = (await call(h, new Request(`${BASE}/api/v1/openapi.json`))).body;
    const props = (name: string) => Object.keys(doc.components.schemas[name].properties).sort();
    expect(props('CreatedConversation')).not.toContain('workflow');
    expect(props('CreatedConversation')).not.toContain('conversation_created_time');
    expect(props('ListedConversation')).toContain('workflow');
    expect(props('ListedConversation')).not.toContain('conversation_created_time');
    expect(props('Conversation')).toEqual(
      expect.arrayContaining(['workflow', 'conversation_created_time', 'conversation_credated_time_nice']),
    );
  });
});
