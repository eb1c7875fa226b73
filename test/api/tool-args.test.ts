// A tool call's arguments are bounded at the edge: over MAX_TOOL_ARGS_BYTES as JSON the HTTP door refuses them
// (400, nothing appended), and a call recorded for the agent or MCP keeps only their start with the size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TOOL_ARGS_BYTES } from '../../src/domain/session/commands.ts';
import { boundToolArgs } from '../../src/domain/session/decide-tool-calls.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const argsOf = (bytes: number, char = 'x') => ({ text: char.repeat(Math.ceil((bytes - 11) / new TextEncoder().encode(char).length)) });
const size = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

describe('boundToolArgs', () => {
  it.each(['x', 'é', '€', '🦀'])('keeps arguments up to the limit whole and cuts larger ones (%s) to at most the limit, with their size', (char) => {
    const small = argsOf(MAX_TOOL_ARGS_BYTES - 100, char);
    expect(boundToolArgs(small)).toBe(small);
    const large = argsOf(MAX_TOOL_ARGS_BYTES * 3, char);
    const cut = boundToolArgs(large) as { truncated: string; original_bytes: number };
    expect(cut.original_bytes).toBe(size(large));
    expect(new TextEncoder().encode(cut.truncated).length).toBeLessThanOrEqual(MAX_TOOL_ARGS_BYTES);
    expect(JSON.stringify(large).startsWith(cut.truncated)).toBe(true);
  });
});

describe.each(databases)('tool call arguments over HTTP ($name)', (database) => {
  let server: TestServer;
  let session: string;
  beforeAll(async () => {
    server = await startTestServer(database, { bodyLimit: 4 * 1024 * 1024 });
    session = (await server.request('POST', '/sessions')).body.session_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([1.01, 2, 10])('refuses arguments of %f times the limit, naming it, appending nothing', async (times) => {
    const before = (await server.runtime.store.head()).position;
    const args = argsOf(Math.ceil(MAX_TOOL_ARGS_BYTES * times));
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'record_tool_call_requested', tool_call_id: `big-${times}`, name: 'whoami', args });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain(`limit of ${MAX_TOOL_ARGS_BYTES} bytes`);
    expect((await server.runtime.store.head()).position).toBe(before);
  });

  it('takes arguments just under the limit', async () => {
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'record_tool_call_requested', tool_call_id: 'fits', name: 'whoami', args: argsOf(MAX_TOOL_ARGS_BYTES - 10) });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
  });
});
