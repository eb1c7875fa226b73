// Read-your-writes by default, over real HTTP on both databases: a 2xx to a command, a DELETE or a
// complete_task means the very next read shows it, without min_position, while 32 other clients write at the
// same time; `Prefer: respond-async` answers without waiting; and a write whose read models are stalled past
// NOMOS_READ_WAIT_MS is still answered, and says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const WRITERS = 32;
const ROUNDS = 4;

describe.each(databases)('read-your-writes on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  const command = (id: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => server.request('POST', `/sessions/${id}/commands`, body, headers);
  const created = async (): Promise<string> => {
    const res = await server.request('POST', '/sessions');
    expect(res.status).toBe(201);
    expect(res.headers.get('x-nomos-read-wait')).toBe('reached');
    return res.body.session_id;
  };

  const list = async (query: string): Promise<Array<{ id: string; outcome: string | null; closed_at: string | null }>> => {
    const res = await server.request('GET', `/sessions?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.sessions;
  };

  /** One scripted client: each of its writes must be visible to its very next read. */
  async function client(n: number): Promise<string[]> {
    const stale: string[] = [];
    const id = await created();
    // The session it just created is in the list and in its detail.
    if (!(await list('limit=200')).some((s) => s.id === id)) stale.push(`client ${n}: new session ${id} missing from GET /sessions`);
    for (let round = 1; round <= ROUNDS; round++) {
      const res = await command(id, { type: 'post_user_message', text: `message ${round} of client ${n}` });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-nomos-read-wait')).toBe('reached');
      const view = await server.request('GET', `/sessions/${id}`);
      if (view.body.session.user_message_count !== round) stale.push(`client ${n}: after message ${round} the session showed ${view.body.session.user_message_count}`);
      if (view.body.messages.at(-1)?.content?.text !== `message ${round} of client ${n}`) stale.push(`client ${n}: message ${round} not last in the transcript`);
    }
    const done = await command(id, { type: 'complete_task', outcome: 'success', summary: `client ${n} is done` });
    expect(done.status).toBe(200);
    const row = (await list('limit=200&status=done')).find((s) => s.id === id);
    if (row?.outcome !== 'success' || row?.closed_at == null) stale.push(`client ${n}: complete_task not shown by GET /sessions (${JSON.stringify(row ?? null)})`);
    const deleted = await server.request('DELETE', `/sessions/${id}`, { reason: 'test' });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.get('x-nomos-read-wait')).toBe('reached');
    const gone = await server.request('GET', `/sessions/${id}`);
    if (gone.status !== 404) stale.push(`client ${n}: GET after DELETE answered ${gone.status}`);
    if ((await list('limit=200')).some((s) => s.id === id)) stale.push(`client ${n}: deleted session still in GET /sessions`);
    return stale;
  }

  it(`shows a command, a complete_task and a DELETE to the very next read, under ${WRITERS} concurrent writers`, async () => {
    const stale = (await Promise.all(Array.from({ length: WRITERS }, (_, n) => client(n)))).flat();
    expect(stale).toEqual([]);
  }, 120_000);

  it('answers at once with Prefer: respond-async, and the write still arrives', async () => {
    const id = await created();
    const res = await command(id, { type: 'post_user_message', text: 'no need to wait' }, { prefer: 'respond-async' });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    expect(res.headers.get('x-nomos-read-wait')).toBe('skipped');
    // Read back the way a client that opted out does: by the position it was given.
    const view = await server.request('GET', `/sessions/${id}?min_position=${res.body.position}`);
    expect(view.body.session.user_message_count).toBe(1);
    // Prefer may carry other preferences and parameters.
    const other = await command(id, { type: 'post_user_message', text: 'again' }, { prefer: 'return=minimal, Respond-Async; x=1' });
    expect(other.headers.get('preference-applied')).toBe('respond-async');
  });

  it('does not wait on reads, refusals or writes that wrote nothing', async () => {
    const read = await server.request('GET', '/sessions?limit=1');
    expect(read.headers.get('x-nomos-read-wait')).toBeNull();
    const refused = await command('00000000-0000-4000-8000-000000000000', { type: 'complete_task', outcome: 'success', summary: 'x' });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.headers.get('x-nomos-read-wait')).toBeNull();
    const classified = await server.request('POST', '/classify', { command: 'uptime' });
    expect(classified.status).toBe(200);
    expect(classified.headers.get('x-nomos-read-wait')).toBeNull();
  });
});

describe.each(databases)('read-your-writes past its bound on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    // No projector runs until the test starts them: the read models cannot catch up.
    server = await startTestServer(database, { readWaitMs: 300, projectors: false });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('answers the write after NOMOS_READ_WAIT_MS, saying the read models had not caught up', async () => {
    const started = Date.now();
    const res = await server.request('POST', '/sessions');
    expect(res.status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.headers.get('x-nomos-read-wait')).toBe('timed-out');
    const id = res.body.session_id;
    expect((await server.request('GET', `/sessions/${id}`)).status).toBe(404);
    server.runtime.startProjectors();
    // The projectors take their leases and catch up; a min_position read answers 503 until then (its wait is
    // the same 300 ms bound, which a loaded machine may need more than once).
    await until('the read models to catch up', async () => {
      const view = await server.request('GET', `/sessions/${id}?min_position=${res.body.position}`);
      if (view.status === 503) return undefined;
      expect(view.status).toBe(200);
      return true;
    });
    const next = await server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'caught up' });
    expect(next.headers.get('x-nomos-read-wait')).toBe('reached');
  });
});
