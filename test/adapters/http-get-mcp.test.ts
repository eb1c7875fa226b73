// The refusal is an answer the agent can read, never a crash: http_get aimed at Nomos's own /metrics through
// MCP (Streamable HTTP, a real server on each database) comes back as a tool error naming what was refused and
// why, and the audit trail records the call as failed with those words.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';

const tokens = parseTokens('operator:alice:op-secret-http-get-1-long-enough-for-32-chars,agent:claude-box:agent-secret-http-get-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-http-get-1-long-enough-for-32-chars' };

describe.each(databases)('http_get through MCP ($name)', (database) => {
  let server: TestServer;
  let agent: Client;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    agent = new Client({ name: 'claude-code', version: '2.1.7' });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: 'Bearer agent-secret-http-get-1-long-enough-for-32-chars' } } }));
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    await server?.close();
  });

  it("refuses the server's own /metrics, in every spelling, as a tool error the agent reads", async () => {
    const port = new URL(server.url).port;
    const expected: Array<[string, string]> = [
      [`http://127.0.0.1:${port}/metrics`, 'refused: 127.0.0.1 is a loopback address; http_get only reaches the public internet (NOMOS_HTTP_GET_ALLOW opens hosts on purpose)'],
      [`http://2130706433:${port}/metrics`, 'refused: 127.0.0.1 is a loopback address;'],
      [`http://[::ffff:127.0.0.1]:${port}/metrics`, 'refused: ::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address;'],
      [`http://localhost:${port}/metrics`, 'refused: localhost resolves to '],
    ];
    let sessionId = '';
    for (const [url, refusal] of expected) {
      const result = (await agent.callTool({ name: 'http_get', arguments: { url } })) as CallToolResult;
      expect(result.isError, url).toBe(true);
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      expect(text, url).toContain(refusal);
      expect(text).not.toContain('nomos_');
      sessionId = result._meta?.['nomos/session_id'] as string;
    }
    const calls = await until('the failed calls in the read model', async () => {
      const res = await server.request('GET', `/sessions/${sessionId}/tool_calls`, undefined, operator);
      return res.status === 200 && res.body.length === expected.length && res.body.every((c: { status: string }) => c.status === 'failed') ? (res.body as any[]) : undefined;
    });
    expect(calls[0]).toMatchObject({ name: 'http_get', status: 'failed' });
    expect(calls[0].error).toContain('refused: 127.0.0.1 is a loopback address');
  });
});
