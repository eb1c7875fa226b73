// A thousand event streams open at once (issue 32), checked for what they receive, not for how fast: 1 000
// `GET /sessions/:id/stream` on 50 sessions (20 each), held by four principals whose cap is raised to 250 each
// (the 251st of one principal is refused 429). One message is appended to one session: each of that session's
// 20 streams receives exactly that event, once, with its position as id; the 980 others receive no data message
// at all. /healthz (with a token: auth is on) answers 200 while all are open, and closing the server ends every
// stream cleanly (the server ends each response; none is cut by an error). The full 1 000 run on PGlite too: under
// vitest the test took 4-14 s per database here (2 cores, the slower runs beside other work); how fast /healthz
// stays beside them is `npm run bench:streams`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { SseClient } from '../support/sse-client.ts';

const STREAMS = 1_000;
const SESSIONS = 50;
const PRINCIPALS = 4;
const CAP = STREAMS / PRINCIPALS;
const secret = (i: number) => `many-${i}-secret-0123456789abcdefghijklmnopqrstuvwxyz`;
const tokens = parseTokens(Array.from({ length: PRINCIPALS }, (_, i) => `operator:p${i}:${secret(i)}`).join(','));
const as = (i: number) => ({ authorization: `Bearer ${secret(i)}` });

describe.each(databases)('a thousand SSE streams ($name)', (database) => {
  let server: TestServer | undefined;
  const clients: SseClient[] = [];
  beforeAll(async () => {
    server = await startTestServer(database, { tokens, maxStreamsPerPrincipal: CAP });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.abort()));
    await server?.close();
  });

  it(`${STREAMS} streams on ${SESSIONS} sessions: only the written session's streams get its event, once; /healthz answers; close ends them all`, async () => {
    const s = server!;
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const res = await s.request('POST', '/sessions', undefined, as(0));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      sessions.push(res.body.session_id as string);
    }
    // Stream k follows session k % SESSIONS, held by principal k % PRINCIPALS; opened a hundred at a time.
    const sessionOf = (k: number) => sessions[k % SESSIONS]!;
    for (let from = 0; from < STREAMS; from += 100) {
      const batch = await Promise.all(
        Array.from({ length: 100 }, (_, j) => from + j).map((k) => SseClient.connect(`${s.url}/sessions/${sessionOf(k)}/stream`, as(k % PRINCIPALS))),
      );
      clients.push(...batch);
    }
    expect(clients.filter((c) => c.status !== 200).map((c) => c.status)).toEqual([]);

    // Each principal holds its cap: one more is refused.
    const refused = await s.request('GET', `/sessions/${sessions[0]}/stream`, undefined, as(1));
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('too_many_streams');
    expect(refused.body.max_streams).toBe(CAP);

    const health = await s.request('GET', '/healthz', undefined, as(3));
    expect(health.status, JSON.stringify(health.body)).toBe(200);

    const target = sessions[7]!;
    const posted = await s.request('POST', `/sessions/${target}/commands`, { type: 'post_user_message', text: 'to the many' }, as(2));
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    const position = String(posted.body.position);
    const mine = clients.filter((_, k) => sessionOf(k) === target);
    const others = clients.filter((_, k) => sessionOf(k) !== target);
    expect(mine).toHaveLength(STREAMS / SESSIONS);
    await Promise.all(mine.map((c) => c.waitFor('the new message', (m) => m.length > 0, 20_000)));
    // Time for a duplicate, or a wrong wake-up on another session, to have arrived.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const c of mine) {
      expect(c.messages).toHaveLength(1);
      expect(c.messages[0]!.id).toBe(position);
      expect(c.messages[0]!.data).toMatchObject({ type: 'user_message', session_id: target, data: { text: 'to the many' } });
    }
    expect(others.filter((c) => c.messages.length > 0).map((c) => c.messages)).toEqual([]);

    expect((await s.request('GET', '/healthz', undefined, as(3))).status).toBe(200);
    expect(clients.filter((c) => c.done)).toEqual([]);

    // Closing the server ends every response; SseClient.ended rejects if one was cut by an error instead.
    server = undefined;
    await s.close();
    await Promise.all(clients.map((c) => c.ended));
    expect(clients.filter((c) => !c.done)).toEqual([]);
    clients.length = 0;
  }, 60_000);
});
