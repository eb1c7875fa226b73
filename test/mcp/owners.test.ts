// The story, through the MCP SDK's client with an agent's token: attached to an operator's session, the
// agent tried to run under the operator's assent window and to complete the task, cancelling the operator's pending
// approval. Both are refused, naming the owner; nothing is appended; the approval still waits.
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { sessionStream } from '../../src/domain/session/stream.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const tokens = parseTokens(`operator:alice:${OP},agent:claude-box:${AGENT}`);
const operator = { authorization: `Bearer ${OP}` };
const text = (result: CallToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe.each(databases)('MCP session owners on $name', (database) => {
  let peer: SshPeer;
  let server: TestServer;
  let agent: Client;
  const scratch = `/tmp/nomos-owners-${randomUUID()}`;
  const call = (name: string, args: Record<string, unknown>) => agent.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  beforeAll(async () => {
    peer = await startSshPeer();
    server = await startTestServer(database, { tokens, executor: new SshExecutor({ privateKey: peer.privateKey }), execution: { shortWaitMs: 5_000, hardLimitMs: 60_000, hungAfterMs: 60_000 } });
    expect((await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) }, operator)).status).toBe(200);
    agent = new Client({ name: 'claude-code', version: '2.1.7' });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${AGENT}` } } }));
  });
  afterAll(async () => {
    await agent?.close();
    await server?.close();
    await peer?.close();
  });

  it("refuses an agent's run under the operator's assent window and its complete_task, and the approval still waits", async () => {
    const id = (await server.request('POST', '/sessions', undefined, operator)).body.session_id as string;
    const waiting = await server.request('POST', `/sessions/${id}/commands`, { type: 'run', target: 'host:peer', command: `touch ${scratch}` }, operator);
    expect(waiting.body.status).toBe('approval_required');
    expect((await server.request('POST', `/sessions/${id}/assent`, { minutes: 30 }, operator)).body.for).toEqual({ role: 'operator', id: 'alice' });
    const before = (await server.runtime.store.readStream(sessionStream(id))).version;

    const run = await call('run', { session_id: id, target: 'host:peer', command: `chmod 600 ${scratch}` });
    expect(run.isError).toBe(true);
    expect(text(run)).toMatch(/belongs to operator:alice/);
    const complete = await call('complete_task', { session_id: id, outcome: 'success', summary: 'all done' });
    expect(complete.isError).toBe(true);
    expect(text(complete)).toMatch(/belongs to operator:alice/);

    expect((await server.runtime.store.readStream(sessionStream(id))).version).toBe(before);
    const approvals = await server.request('GET', `/approvals?session_id=${id}`, undefined, operator);
    expect(approvals.body.approvals.map((a: { status: string }) => a.status)).toEqual(['pending']);
    const execution = await server.request('GET', `/executions/${waiting.body.execution_id}`, undefined, operator);
    expect(execution.body.status).toBe('awaiting_approval');
  });

  it('lets the agent work in a session an operator handed to it', async () => {
    const id = (await server.request('POST', '/sessions', undefined, operator)).body.session_id as string;
    expect((await server.request('POST', `/sessions/${id}/owner`, { owner: 'agent:claude-box' }, operator)).status).toBe(200);
    const goal = await call('set_goal', { session_id: id, goal: 'check the peer' });
    expect(goal.isError).not.toBe(true);
    const events = await server.runtime.store.readStream(sessionStream(id));
    expect(events.events.map((e) => e.type)).toContain('GoalSet');
  });
});
