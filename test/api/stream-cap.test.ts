// One principal holds only so many event streams open (a session's and /changes together): the next is refused
// 429 too_many_streams naming the cap, others are not held back by it, and a stream that closes frees its place.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { SseClient } from '../support/sse-client.ts';
import { until } from '../support/until.ts';

const CAP = 3;
const tokens = parseTokens('operator:alice:alice-secret-0123456789abcdefghijklmnop,operator:bob:bob-secret-0123456789abcdefghijklmnopq');
const alice = { authorization: 'Bearer alice-secret-0123456789abcdefghijklmnop' };
const bob = { authorization: 'Bearer bob-secret-0123456789abcdefghijklmnopq' };

describe.each(databases)('streams per principal ($name)', (database) => {
  let server: TestServer;
  let session: string;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens, maxStreamsPerPrincipal: CAP });
    session = (await server.request('POST', '/sessions', undefined, alice)).body.session_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it(`refuses a caller's stream past ${CAP} with 429 naming the cap, serves another caller, and frees a place on close`, async () => {
    const paths = [`/sessions/${session}/stream`, '/changes', `/sessions/${session}/stream`];
    const open = await Promise.all(paths.map((path) => SseClient.connect(server.url + path, alice)));
    expect(open.map((c) => c.status)).toEqual([200, 200, 200]);
    try {
      for (const path of [`/sessions/${session}/stream`, '/changes']) {
        const refused = await server.request('GET', path, undefined, alice);
        expect(refused.status).toBe(429);
        expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
        expect(refused.body.code).toBe('too_many_streams');
        expect(refused.body.max_streams).toBe(CAP);
        expect(refused.body.detail).toContain(`NOMOS_MAX_STREAMS=${CAP}`);
      }
      const other = await SseClient.connect(`${server.url}/changes`, bob);
      expect(other.status).toBe(200);
      await other.abort();
      await open[0]!.abort();
      // The server sees the close a moment later.
      const again = await until('a place freed by the closed stream', async () => {
        const client = await SseClient.connect(`${server.url}/changes`, alice);
        if (client.status === 200) return client;
        await client.abort();
        return undefined;
      });
      await again.abort();
    } finally {
      await Promise.all(open.map((c) => c.abort()));
    }
  });
});
