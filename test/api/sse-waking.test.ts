// A session's event stream wakes only for its own session and reads only what follows its last position: appends
// to other sessions cost it no read, and a client resuming on a long session is not sent, nor made to read, the
// session from its start. Reads are counted on the real store, by stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionStream } from '../../src/domain/session/stream.ts';
import type { EventStore } from '../../src/ports/event-store.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { SseClient } from '../support/sse-client.ts';

/** Counts, per stream, the reads of the store and the events they returned; the reads themselves go through. */
function countReads(store: EventStore) {
  const reads = new Map<string, { calls: number; events: number }>();
  const original = store.readStream.bind(store);
  store.readStream = async (name, range) => {
    const result = await original(name, range);
    const count = reads.get(name) ?? { calls: 0, events: 0 };
    count.calls += 1;
    count.events += result.events.length;
    reads.set(name, count);
    return result;
  };
  return (name: string) => ({ ...(reads.get(name) ?? { calls: 0, events: 0 }) });
}

describe.each(databases)('SSE streams wake for their own session ($name)', (database) => {
  let server: TestServer;
  let readsOf: ReturnType<typeof countReads>;
  const say = async (session: string, text: string) => {
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'post_user_message', text });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.position as number;
  };

  beforeAll(async () => {
    server = await startTestServer(database);
    readsOf = countReads(server.runtime.store);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a stream on session A does no read while session B gets events, and wakes for its own', async () => {
    const a = (await server.request('POST', '/sessions')).body.session_id as string;
    const b = (await server.request('POST', '/sessions')).body.session_id as string;
    const client = await SseClient.connect(`${server.url}/sessions/${a}/stream`);
    try {
      await say(a, 'first');
      await client.waitFor('the first message', (m) => m.some((x) => x.data?.data?.text === 'first'));
      // The stream's own wake-up for 'first' may still be reading (a load-dependent tail): wait until it settles.
      let before = readsOf(sessionStream(a));
      for (let settled = false; !settled; ) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        const now = readsOf(sessionStream(a));
        settled = now.calls === before.calls;
        before = now;
      }
      for (let i = 0; i < 40; i++) await say(b, `b ${i}`);
      // Time for a wake-up that should not come to have come.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(readsOf(sessionStream(a))).toEqual(before);
      await say(a, 'second');
      await client.waitFor('the second message', (m) => m.some((x) => x.data?.data?.text === 'second'));
      const after = readsOf(sessionStream(a));
      expect(after.calls).toBeGreaterThan(before.calls);
      // Only what followed the last event sent was read: the new event, not the session again.
      expect(after.events - before.events).toBeLessThanOrEqual(3);
    } finally {
      await client.abort();
    }
  });

  it('resuming on a long session reads and sends only what follows the resume point', async () => {
    const a = (await server.request('POST', '/sessions')).body.session_id as string;
    let resumeAt = 0;
    for (let i = 0; i < 300; i++) {
      const position = await say(a, `m ${i}`);
      if (i === 289) resumeAt = position;
    }
    const before = readsOf(sessionStream(a));
    const client = await SseClient.connect(`${server.url}/sessions/${a}/stream`, { 'last-event-id': String(resumeAt) });
    try {
      const messages = await client.waitFor('the last ten', (m) => m.some((x) => x.data?.data?.text === 'm 299'));
      const texts = messages.map((m) => m.data?.data?.text).filter((t) => typeof t === 'string' && t.startsWith('m '));
      expect(texts).toEqual(Array.from({ length: 10 }, (_, i) => `m ${290 + i}`));
      // Bisection reads one event a step; the catch-up reads the ten (and whatever the reactor added since).
      expect(readsOf(sessionStream(a)).events - before.events).toBeLessThan(60);
    } finally {
      await client.abort();
    }
  });

  it('live from now sends nothing of the past, then what comes', async () => {
    const a = (await server.request('POST', '/sessions')).body.session_id as string;
    for (let i = 0; i < 5; i++) await say(a, `old ${i}`);
    const client = await SseClient.connect(`${server.url}/sessions/${a}/stream`);
    try {
      await say(a, 'new');
      const messages = await client.waitFor('the new message', (m) => m.some((x) => x.data?.data?.text === 'new'));
      expect(messages.some((m) => String(m.data?.data?.text).startsWith('old'))).toBe(false);
    } finally {
      await client.abort();
    }
  });
});
