// An MCP client's session ends with its MCP session: the official SDK client ends it (DELETE on /mcp) and the
// Nomos session it opened is closed as partial, user_abandoned, by the system; one it completed itself, or one it
// only attached to by session_id, is left as it is; an MCP session that lapsed is ended by the sweep, and its
// Nomos session closed. A real server on each database.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { closeLapsedMcp } from '../../src/execution/sweeps.ts';
import { MCP_SESSION_TTL_MS } from '../../src/mcp/sessions.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:claude-box:agent-secret-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const AGENT_TOKEN = 'agent-secret-1-long-enough-for-32-chars';

describe.each(databases)('MCP sessions ending on $name', (database) => {
  let server: TestServer;
  const clients: Client[] = [];

  async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${AGENT_TOKEN}` } } });
    const client = new Client({ name: 'claude-code', version: '2.1.7' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }
  const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  /** Sets a goal, in a session of its own unless one is named; returns the Nomos session's id. */
  const goal = async (client: Client, text: string, sessionId?: string) => {
    const result = await call(client, 'set_goal', { goal: text, ...(sessionId !== undefined && { session_id: sessionId }) });
    expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false);
    return result._meta?.['nomos/session_id'] as string;
  };
  const read = async (id: string) => (await server.request('GET', `/sessions/${id}`, undefined, operator)).body.session;
  const closed = (id: string) =>
    until(`session ${id} closed in the read model`, async () => {
      const s = await read(id);
      return s.status === 'active' ? undefined : s;
    });
  const mcpRows = async () => Number((await server.runtime.db.query<{ n: string }>('SELECT count(*) AS n FROM mcp_sessions')).rows[0]!.n);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await server?.close();
  });

  it('closes the Nomos session an MCP session opened when its client ends the MCP session', async () => {
    const { transport, client } = await connect();
    const id = await goal(client, 'Rotate the backup keys');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await transport.terminateSession();
    const s = await closed(id);
    expect(s).toMatchObject({ status: 'done', outcome: 'partial', blocker: 'user_abandoned', closed_by: { role: 'system', id: 'executor' } });
    expect(s.summary).toMatch(/ended its MCP session before completing the task/);
    const events = (await server.request('GET', `/sessions/${id}/events?limit=500`, undefined, operator)).body.events as any[];
    expect(events.at(-1)).toMatchObject({ type: 'TaskCompleted', metadata: { actor: { role: 'system', id: 'executor' } } });
  });

  it('leaves a task the client completed itself, and a session it only attached to', async () => {
    const { transport, client } = await connect();
    const own = await goal(client, 'Check the disks');
    const done = await call(client, 'complete_task', { outcome: 'success', summary: 'disks are fine' });
    expect(done.isError ?? false, JSON.stringify(done.content)).toBe(false);
    const named = (await server.request('POST', '/sessions', undefined, { authorization: `Bearer ${AGENT_TOKEN}` })).body.session_id as string;
    await goal(client, 'Look at the named session', named);
    await transport.terminateSession();
    expect(await closed(own)).toMatchObject({ outcome: 'success', blocker: null, closed_by: { role: 'agent', id: 'claude-box' } });
    // The DELETE has been answered: the named session stays open.
    expect((await read(named)).status).toBe('active');
  });

  it('ends a lapsed MCP session in the sweep and closes the Nomos session it opened', async () => {
    const { client } = await connect();
    const id = await goal(client, 'Tidy /tmp');
    expect(await mcpRows()).toBe(1);
    // Not lapsed yet: nothing ends.
    expect(await closeLapsedMcp(server.runtime.commandDeps)).toBe(0);
    const later = { ...server.runtime.commandDeps, clock: () => new Date(Date.now() + MCP_SESSION_TTL_MS + 60_000) };
    expect(await closeLapsedMcp(later)).toBe(1);
    expect(await mcpRows()).toBe(0);
    expect(await closed(id)).toMatchObject({ outcome: 'partial', blocker: 'user_abandoned', closed_by: { role: 'system', id: 'executor' } });
    // Its client is told its session is gone (404): it must initialize again.
    await expect(call(client, 'whoami', {})).rejects.toThrow(/404|not found|session/i);
  });
});
