// A session resource read over MCP holds at most RESOURCE_ITEMS tool calls and executions, the first ones, and
// says when there are more and where to page through them; a small session's resource says nothing of it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandContext } from '../../src/commands/context.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import { RESOURCE_ITEMS } from '../../src/mcp/resources.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const operator: CommandContext = { actor: { role: 'operator', id: 'anonymous' } };

describe.each(databases)('session resources are bounded on $name', (database) => {
  let server: TestServer;
  let mcp: Client;
  let big: string;
  let small: string;

  const started = async (): Promise<string> => {
    const res = await server.request('POST', '/sessions');
    expect(res.status).toBe(201);
    return res.body.session_id as string;
  };
  const call = (session: string, n: number) =>
    runSessionCommand(server.runtime.commandDeps, session, { type: 'record_tool_call_requested', tool_call_id: `call-${n}`, name: 'list_entities', args: { n } }, operator);

  beforeAll(async () => {
    server = await startTestServer(database);
    big = await started();
    small = await started();
    for (let n = 1; n <= RESOURCE_ITEMS + 2; n++) await call(big, n);
    await call(small, 1);
    mcp = new Client({ name: 'bounds-test', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  const read = async (session: string) => JSON.parse(((await mcp.readResource({ uri: `nomos://sessions/${session}` })).contents[0] as { text: string }).text);

  it(`holds the first ${RESOURCE_ITEMS} tool calls of a longer session, and says there are more`, async () => {
    const body = await read(big);
    expect(body.tool_calls).toHaveLength(RESOURCE_ITEMS);
    expect(body.tool_calls[0].id).toBe('call-1');
    expect(body.tool_calls.at(-1).id).toBe(`call-${RESOURCE_ITEMS}`);
    expect(body.more).toEqual({ tool_calls: true, executions: false });
    expect(body.read_further).toContain(`/sessions/${big}/tool_calls`);
  });

  it('holds all of a small session, without a word of more', async () => {
    const body = await read(small);
    expect(body.tool_calls.map((c: { id: string }) => c.id)).toEqual(['call-1']);
    expect(body).not.toHaveProperty('more');
  });
});
