// Sessions have owners, over real HTTP with an operator's and an agent's token: an agent writes only to its own
// sessions (403 naming the owner, nothing appended), an operator hands a session over, an assent window names
// whom it is for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const tokens = parseTokens(`operator:alice:${OP},agent:bot:${AGENT}`);
const operator = { authorization: `Bearer ${OP}` };
const agent = { authorization: `Bearer ${AGENT}` };

describe.each(databases)('session owners on $name', (database) => {
  let server: TestServer;
  const head = async () => (await server.runtime.store.head()).position;
  const start = async (as: Record<string, string>) => (await server.request('POST', '/sessions', undefined, as)).body.session_id as string;
  const post = (id: string, text: string, as: Record<string, string>) => server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text }, as);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    const host = { slug: 'host:nowhere', type: 'host', ssh: { host: '127.0.0.1', port: 9, user: 'root' } };
    expect((await server.request('POST', '/entities', host, operator)).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses an agent's command to an operator's session, naming the owner, and appends nothing", async () => {
    const id = await start(operator);
    const before = await head();
    for (const body of [
      { type: 'post_user_message', text: 'hi' },
      { type: 'set_goal', goal: 'take it over' },
      { type: 'complete_task', outcome: 'success', summary: 'x' },
      { type: 'run', target: 'host:nowhere', command: 'uptime' },
    ]) {
      const res = await server.request('POST', `/sessions/${id}/commands`, body, agent);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'not_session_owner' });
      expect(res.body.detail).toMatch(/operator:alice/);
    }
    expect(await head()).toBe(before);
    expect((await post(id, 'an operator writes anywhere', operator)).status).toBe(200);
  });

  it("lets an agent write to its own session, and an operator to the agent's", async () => {
    const id = await start(agent);
    expect((await post(id, 'mine', agent)).status).toBe(200);
    expect((await post(id, 'the operator too', operator)).status).toBe(200);
  });

  it('hands a session to an agent, who may then write to it', async () => {
    const id = await start(operator);
    expect((await post(id, 'not yet', agent)).status).toBe(403);
    const handed = await server.request('POST', `/sessions/${id}/owner`, { owner: 'agent:bot' }, operator);
    expect(handed.status).toBe(200);
    expect(handed.body).toMatchObject({ events: ['SessionHandedOver'], owner: { role: 'agent', id: 'bot' } });
    expect((await post(id, 'mine now', agent)).status).toBe(200);
  });

  it('lets only operators hand over, and refuses a malformed owner with a 400 and no event', async () => {
    const id = await start(agent);
    const before = await head();
    const byAgent = await server.request('POST', `/sessions/${id}/owner`, { owner: 'agent:other' }, agent);
    expect(byAgent.status).toBe(403);
    for (const owner of ['bot', 'auditor:x', 'agent:', 'agent:a b']) {
      const res = await server.request('POST', `/sessions/${id}/owner`, { owner }, operator);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/owner/);
    }
    expect(await head()).toBe(before);
  });

  it("grants an assent window to the session's owner by default, or to whom the operator names", async () => {
    const id = await start(agent);
    const own = await server.request('POST', `/sessions/${id}/assent`, { minutes: 5 }, operator);
    expect(own.body.for).toEqual({ role: 'agent', id: 'bot' });
    const named = await server.request('POST', `/sessions/${id}/assent`, { minutes: 5, for: 'operator:alice' }, operator);
    expect(named.body.for).toEqual({ role: 'operator', id: 'alice' });
    const events = await server.request('GET', `/sessions/${id}/events`, undefined, operator);
    expect(events.body.events.at(-1).data.for).toEqual({ role: 'operator', id: 'alice' });
  });
});
