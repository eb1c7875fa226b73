// POST /mcp refuses what is not a proper MCP request with a 4xx whose JSON-RPC error says why, and records
// nothing: no token, an unknown or another token's session, a body that is not JSON or not JSON-RPC, the
// server-to-client stream it does not offer, a session after it ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:claude-box:agent-secret-1-long-enough-for-32-chars');
const agent = { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars', accept: 'application/json, text/event-stream' };
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '8' } } };
const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };

describe.each(databases)('POST /mcp with bad input ($name)', (database) => {
  let server: TestServer;
  const events = async () => Number((await server.runtime.db.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers each bad request with a 4xx naming the problem, and appends nothing', async () => {
    const before = await events();
    const opened = await server.request('POST', '/mcp', initialize, agent);
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect(opened.body.result.serverInfo.name).toBe('nomos');
    const withSession = { ...agent, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    expect((await server.request('POST', '/mcp', list, withSession)).body.result.tools.length).toBe(21);

    const cases: Array<[string, Awaited<ReturnType<TestServer['request']>>, number, RegExp]> = [
      ['no token', await server.request('POST', '/mcp', list, { accept: agent.accept }), 401, /unauthenticated: send an API token/],
      ['a wrong token', await server.request('POST', '/mcp', list, { ...withSession, authorization: 'Bearer nope-nope-nope' }), 401, /not one this server knows/],
      ['no session header', await server.request('POST', '/mcp', list, agent), 400, /Mcp-Session-Id header/],
      ['an unknown session', await server.request('POST', '/mcp', list, { ...withSession, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }), 404, /Session not found/],
      ['a malformed session id', await server.request('POST', '/mcp', list, { ...withSession, 'mcp-session-id': "'; DROP TABLE mcp_sessions; --" }), 404, /Session not found/],
      ["another token's session", await server.request('POST', '/mcp', list, { ...withSession, authorization: 'Bearer op-secret-1-long-enough-for-32-chars' }), 404, /Session not found/],
      ['JSON that is not JSON-RPC', await server.request('POST', '/mcp', { hello: 1 }, withSession), 400, /Invalid JSON-RPC message|Parse error/],
      ['an unknown method', await server.request('POST', '/mcp', { jsonrpc: '2.0', id: 3, method: 'fleet/format', params: {} }, withSession), 200, /Method not found/],
    ];
    for (const [name, res, status, message] of cases) {
      expect(res.status, name).toBe(status);
      expect(JSON.stringify(res.body), name).toMatch(message);
    }
    const malformed = await server.request('POST', '/mcp', '{"jsonrpc": "2.0", "method": ', withSession);
    expect(malformed.status).toBe(400);
    expect(JSON.stringify(malformed.body)).toMatch(/JSON/);
    const stream = await server.request('GET', '/mcp', undefined, withSession);
    expect(stream.status).toBe(405);
    expect(stream.headers.get('allow')).toBe('POST, DELETE');

    expect((await server.request('DELETE', '/mcp', undefined, withSession)).status).toBe(204);
    const ended = await server.request('POST', '/mcp', list, withSession);
    expect(ended.status).toBe(404);
    expect(await events()).toBe(before);
  });
});
