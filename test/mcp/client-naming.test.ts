// With auth off, an MCP caller is recorded as agent:<the clientInfo name of its handshake> (src/mcp/client-actor.ts),
// never as the operator; X-Nomos-Actor is refused on /mcp; `nomos mcp --name NAME` names a stdio client.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const BIN = fileURLToPath(new URL('../../bin/nomos.mjs', import.meta.url));

describe.each(databases)('MCP client naming with auth off ($name)', (database) => {
  let server: TestServer;
  const actorsOfGoal = async (goal: string) =>
    (await server.runtime.db.query<{ metadata: { actor: unknown } }>("SELECT metadata FROM events WHERE data->>'goal' = $1", [goal])).rows.map((r) => r.metadata.actor);
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('records an HTTP client as agent:<its clientInfo name>, slugged, never the operator', async () => {
    const client = new Client({ name: 'Operator: Evil Bot', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    await client.callTool({ name: 'set_goal', arguments: { goal: `goal-http-${database.name}` } });
    await client.close();
    expect(await actorsOfGoal(`goal-http-${database.name}`)).toEqual([{ role: 'agent', id: 'operator-evil-bot' }]);
  });

  it('refuses X-Nomos-Actor on /mcp, naming it, and appends nothing', async () => {
    const before = (await server.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n;
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-nomos-actor': 'operator:alice' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/X-Nomos-Actor is not taken on \/mcp/);
    expect((await server.runtime.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]!.n).toBe(before);
  });

  it('names a stdio client by `nomos mcp --name`', async () => {
    const client = new Client({ name: 'whatever-the-agent-says', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--name', 'night-shift'], env: { PATH: process.env.PATH ?? '', NOMOS_URL: server.url }, stderr: 'pipe' }));
    await client.callTool({ name: 'set_goal', arguments: { goal: `goal-stdio-${database.name}` } });
    await client.close();
    expect(await actorsOfGoal(`goal-stdio-${database.name}`)).toEqual([{ role: 'agent', id: 'night-shift' }]);
  });
});
