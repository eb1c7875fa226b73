// GET /sessions/:id?at_position=P on both databases: the session as the log stood at P, folded again from its
// events (not today's read model): its goal and messages then, not since; a read-model row changed by hand does
// not show through; a position before the session began is 404, past the log or not a number 400; nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe.each(databases)('a session at a position on $name', (database) => {
  let server: TestServer;
  let id: string;
  let before: number;
  let goalAt: number;
  let later: number;

  const command = async (body: unknown) => {
    const res = await server.request('POST', `/sessions/${id}/commands`, body);
    expect(res.status).toBe(200);
    return res.body.position as number;
  };

  beforeAll(async () => {
    server = await startTestServer(database);
    before = (await server.request('POST', '/sessions')).body.position as number;
    const created = await server.request('POST', '/sessions');
    id = created.body.session_id as string;
    await command({ type: 'post_user_message', text: 'the backup is broken' });
    goalAt = await command({ type: 'set_goal', goal: 'fix the backup' });
    await command({ type: 'set_goal', goal: 'replace the backup tool' });
    later = await command({ type: 'post_user_message', text: 'and the logs' });
  }, 60_000);
  afterAll(async () => server?.close());

  it('answers the session as it stood then, from its events', async () => {
    const then = await server.request('GET', `/sessions/${id}?at_position=${goalAt}`);
    expect(then.status).toBe(200);
    expect(then.body.as_of_position).toBe(goalAt);
    expect(then.body.session.goal).toBe('fix the backup');
    expect(then.body.messages.map((m: { content: { text: string } }) => m.content.text)).toEqual(['the backup is broken']);
    const now = await server.request('GET', `/sessions/${id}?min_position=${later}`);
    expect(now.body.session.goal).toBe('replace the backup tool');
    expect(now.body.messages).toHaveLength(2);
    // Not read from the read model: a row changed by hand does not show in the past view.
    await server.runtime.db.query(`UPDATE sessions SET goal = 'changed by hand' WHERE id = $1`, [id]);
    expect((await server.request('GET', `/sessions/${id}?at_position=${later}`)).body.session.goal).toBe('replace the backup tool');
    const { rows } = await server.runtime.db.query<{ goal: string }>('SELECT goal FROM sessions WHERE id = $1', [id]);
    expect(rows[0]?.goal).toBe('changed by hand');
  });

  it('refuses positions it cannot answer, writing nothing', async () => {
    const count = async () => (await server.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
    const events = await count();
    const head = (await server.request('GET', '/log')).body.head_position as number;
    const cases: [string, number, string | RegExp][] = [
      [`?at_position=${before}`, 404, 'session_not_found'],
      [`?at_position=${head + 1}`, 400, 'at_position_past_log'],
      ['?at_position=0', 400, /at_position/],
      ['?at_position=abc', 400, /at_position/],
      ['?at_position=1.5', 400, /at_position/],
    ];
    for (const [query, status, named] of cases) {
      const res = await server.request('GET', `/sessions/${id}${query}`);
      expect({ query, status: res.status }).toEqual({ query, status });
      if (typeof named === 'string') expect(res.body.code).toBe(named);
      else expect(JSON.stringify(res.body)).toMatch(named);
    }
    expect(await count()).toBe(events);
  });
});
