// Nomos as an MCP server, driven by the official SDK's own client over both transports: Streamable HTTP to
// `POST /mcp` of a real server (on each database), and stdio through a real `nomos mcp` process piping to it.
// Commands run on a real SSH server; approvals are given through the HTTP API by an operator, as in the console.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { TOOLS, argumentsSchema } from '../../src/agent/tools.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

const BIN = fileURLToPath(new URL('../../bin/nomos.mjs', import.meta.url));
const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:claude-box:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const CLIENT = { name: 'claude-code', version: '2.1.7' };
const WRITING = ['set_goal', 'propose_plan', 'update_plan_step', 'complete_task', 'run', 'inspect_path', 'update_entity_attributes', 'create_relationship', 'upsert_knowledge', 'http_get'];

type Door = 'http' | 'stdio';

function transportFor(door: Door, server: TestServer, token: string | null): Transport {
  if (door === 'http') return new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: token === null ? {} : { authorization: `Bearer ${token}` } } });
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NOMOS_URL: server.url };
  if (token !== null) env.NOMOS_TOKEN = token;
  return new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env, stderr: 'pipe' });
}

async function connect(door: Door, server: TestServer, token: string | null, info = CLIENT): Promise<Client> {
  const client = new Client(info);
  await client.connect(transportFor(door, server, token));
  return client;
}

const text = (result: CallToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
/** The tool's answer: the JSON text the server sends after any plain-words headline. */
const answer = (result: CallToolResult): any => JSON.parse((result.content.at(-1) as { text: string }).text);

const cases: Array<{ door: Door; database: (typeof databases)[number] }> = [
  ...databases.map((database) => ({ door: 'http' as const, database })),
  { door: 'stdio', database: databases.find((d) => d.name === 'pglite')! },
];

describe.each(cases)('MCP over $door ($database.name)', ({ door, database }) => {
  let peer: SshPeer;
  let server: TestServer;
  let agent: Client;
  /** The Nomos session the client's first call started. */
  let ownSession = '';
  const scratch = `/tmp/nomos-mcp-${randomUUID()}`;
  const eventCount = async () => Number((await server.runtime.db.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
  const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  beforeAll(async () => {
    mkdirSync(scratch, { recursive: true });
    peer = await startSshPeer();
    server = await startTestServer(database, {
      tokens,
      executor: new SshExecutor({ privateKey: peer.privateKey }),
      execution: { shortWaitMs: 5_000, hardLimitMs: 60_000, hungAfterMs: 60_000 },
    });
    const reg = await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    agent = await connect(door, server, 'agent-secret-1-long-enough-for-32-chars');
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    await server?.close();
    await peer?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lists the built-in agent's tools with their schemas and honest annotations; an auditor's list has no writing tool", async () => {
    const { tools } = await agent.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const t of TOOLS) {
      const listed = tools.find((x) => x.name === t.name)!;
      expect(listed.description).toBe(t.description);
      expect(listed.annotations).toMatchObject(t.annotations);
      // The agent's own schema, plus the optional session to attach to.
      const { properties, ...rest } = listed.inputSchema as Record<string, unknown> & { properties: Record<string, unknown> };
      const { session_id, ...own } = properties;
      const agentSchema = argumentsSchema(t);
      expect({ ...rest, properties: own }).toEqual({ ...agentSchema, properties: agentSchema.properties ?? {} });
      expect(session_id).toMatchObject({ type: 'string', format: 'uuid' });
      expect(session_id).not.toHaveProperty('$schema');
    }
    expect(tools.find((t) => t.name === 'run')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    expect(tools.find((t) => t.name === 'list_entities')!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });

    const auditor = await connect(door, server, 'audit-secret-1-long-enough-for-32-chars', { name: 'audit-script', version: '1' });
    try {
      const listed = (await auditor.listTools()).tools;
      expect(listed.length).toBeGreaterThan(5);
      for (const name of WRITING) expect(listed.map((t) => t.name)).not.toContain(name);
      // Nor one that reads a session of the caller's own: a reader has none.
      expect(listed.map((t) => t.name)).not.toContain('get_tool_result');
      expect(listed.every((t) => t.annotations?.readOnlyHint === true && t.annotations.openWorldHint === false)).toBe(true);
      // A reader reads, and leaves no trace: no session is started for it.
      const before = await eventCount();
      const who = answer(await call(auditor, 'whoami', {}));
      expect(who).toMatchObject({ agent: 'audit', role: 'auditor', session_id: null, client: { name: 'audit-script', version: '1' } });
      expect(answer(await call(auditor, 'list_entities', {})).map((e: { slug: string }) => e.slug)).toContain('host:peer');
      // A writing tool is not there for it, whatever it sends.
      await expect(call(auditor, 'run', { target: 'host:peer', command: 'touch /tmp/x' })).rejects.toThrow(/tool run is not offered to role auditor/);
      expect(await eventCount()).toBe(before);
    } finally {
      await auditor.close();
    }
  });

  it('classifies a command without running it', async () => {
    expect(answer(await call(agent, 'classify_command', { command: 'rm -rf /srv/data' }))).toMatchObject({ risk_class: 'destructive' });
    expect(answer(await call(agent, 'classify_command', { command: 'df -h' }))).toMatchObject({ risk_class: 'reversible_low' });
  });

  it('runs a read-only command on a real SSH target at once, in a session of its own recorded with the actor and the client', async () => {
    const result = await call(agent, 'run', { target: 'host:peer', command: 'echo hello-from-mcp && uname -s' });
    expect(result.isError ?? false).toBe(false);
    expect(answer(result)).toMatchObject({ status: 'succeeded', verdict: { risk_class: 'reversible_low' } });
    expect(answer(result).stdout).toContain('hello-from-mcp');
    const sessionId = result._meta?.['nomos/session_id'] as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    ownSession = sessionId;
    expect(answer(await call(agent, 'whoami', {}))).toMatchObject({ agent: 'claude-box', role: 'agent', session_id: sessionId, client: CLIENT });

    const calls = await until('the tool calls in the read model', async () => {
      const res = await server.request('GET', `/sessions/${sessionId}/tool_calls`, undefined, operator);
      return res.status === 200 && res.body.length >= 4 && res.body.every((c: { status: string }) => c.status !== 'requested') ? (res.body as any[]) : undefined;
    });
    // The session began at the client's first call (the classifications of the test before).
    expect(calls.map((c) => c.name)).toEqual(['classify_command', 'classify_command', 'run', 'whoami']);
    for (const c of calls) expect(c).toMatchObject({ status: 'completed', actor: { role: 'agent', id: 'claude-box' }, client: CLIENT });
    expect(calls[2].args).toEqual({ target: 'host:peer', command: 'echo hello-from-mcp && uname -s' });
    // The execution too names who asked, and the events name the client.
    const events = (await server.request('GET', `/sessions/${sessionId}/events`, undefined, operator)).body.events as any[];
    const requested = events.find((e) => e.type === 'ExecutionRequested');
    expect(requested.metadata).toMatchObject({ actor: { role: 'agent', id: 'claude-box' }, client: CLIENT });
  });

  it('stops a destructive command for an operator: approval_required with the approval and its expiry; approved through the API, get_execution_status shows it succeeded', async () => {
    writeFileSync(`${scratch}/victim`, 'x');
    const asked = await call(agent, 'run', { target: 'host:peer', command: `rm -rf ${scratch}/victim && echo removed-victim` });
    const reply = answer(asked);
    expect(reply).toMatchObject({ status: 'approval_required', verdict: { risk_class: 'destructive' } });
    expect(reply.approval_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(reply.expires_at)).toBeGreaterThan(Date.now());
    expect(text(asked)).toContain(`needs an operator's approval (approval ${reply.approval_id}`);
    expect(existsSync(`${scratch}/victim`)).toBe(true);

    const pending = answer(await call(agent, 'get_execution_status', { execution_id: reply.execution_id }));
    expect(pending.status).toBe('awaiting_approval');
    // The agent's own token cannot approve, over MCP or HTTP.
    const self = await server.request('POST', `/approvals/${reply.approval_id}/approve`, {}, { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars' });
    expect(self.status).toBe(403);

    const approved = await server.request('POST', `/approvals/${reply.approval_id}/approve`, {}, operator);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await until('the approved command to finish', async () => {
      const status = answer(await call(agent, 'get_execution_status', { execution_id: reply.execution_id }));
      return status.status === 'succeeded' ? status : undefined;
    });
    expect(done.stdout_tail ?? done.stdout).toContain('removed-victim');
    expect(existsSync(`${scratch}/victim`)).toBe(false);
  });

  it('answers bad arguments, unknown tools and a session of its choosing with clear errors, and appends nothing for them', async () => {
    // Settle what earlier tests set going (the approved run's end) before counting.
    await new Promise((r) => setTimeout(r, 300));
    const before = await eventCount();
    const missing = await call(agent, 'run', { target: 'host:peer' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/invalid arguments for run: command: /);
    const extra = await call(agent, 'classify_command', { command: 'ls', sudo: true });
    expect(extra.isError).toBe(true);
    expect(text(extra)).toMatch(/Unrecognized key.*sudo/i);
    const badSession = await call(agent, 'whoami', { session_id: 'not-a-uuid' });
    expect(badSession.isError).toBe(true);
    expect(text(badSession)).toMatch(/session_id/);
    await expect(call(agent, 'format_disk', {})).rejects.toThrow(/there is no tool format_disk; the tools are whoami, set_goal/);
    expect(await eventCount()).toBe(before);
  });

  it("works in a session it names (session_id), and reads what it wrote back as a knowledge resource", async () => {
    const created = await server.request('POST', '/sessions', undefined, operator);
    const named = created.body.session_id as string;
    // An agent works only in its own sessions: the operator hands this one over first (test/mcp/owners.test.ts).
    expect((await server.request('POST', `/sessions/${named}/owner`, { owner: 'agent:claude-box' }, operator)).status).toBe(200);
    const goal = await call(agent, 'set_goal', { goal: 'Write down how the peer is reached', session_id: named });
    expect(goal._meta?.['nomos/session_id']).toBe(named);
    // Its later calls stay there without naming it again.
    const kept = await call(agent, 'upsert_knowledge', { kind: 'runbook', title: 'Reaching peer', body: 'ssh as the test user on the loopback port', about: ['host:peer'] });
    expect(kept._meta?.['nomos/session_id']).toBe(named);
    const id = answer(kept).knowledge_id as string;
    const item = await agent.readResource({ uri: `nomos://knowledge/${id}` });
    expect((item.contents[0] as { text: string }).text).toMatch(/^# Reaching peer\n\nrunbook · about host:peer/);
    expect((await agent.listResources()).resources.map((r) => r.uri)).toContain(`nomos://knowledge/${id}`);
    const unknown = await call(agent, 'whoami', { session_id: randomUUID() });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/There is no session/);
    expect((await server.request('DELETE', `/sessions/${named}`, { reason: 'test' }, operator)).status).toBe(200);
    const deleted = await call(agent, 'whoami', { session_id: named });
    expect(deleted.isError).toBe(true);
    expect(text(deleted)).toMatch(/was deleted/);
    // Back to the client's own session for the tests that follow.
    await call(agent, 'whoami', { session_id: ownSession });
  });

  it('refuses a missing or a wrong token with a message that says so, appending nothing', async () => {
    const before = await eventCount();
    await expect(connect(door, server, null)).rejects.toThrow(/unauthenticated: send an API token/);
    await expect(connect(door, server, 'not-a-token-of-ours')).rejects.toThrow(/unauthenticated: the API token is not one this server knows/);
    expect(await eventCount()).toBe(before);
  });

  it('shows what the client did as a session like any other: the sessions list, its resource, the review prompt', async () => {
    const who = answer(await call(agent, 'whoami', {}));
    await call(agent, 'set_goal', { goal: 'Tidy the scratch area on peer' });
    await call(agent, 'complete_task', { outcome: 'success', summary: 'removed the victim file' });
    const listed = await until('the session in GET /sessions', async () => {
      const res = await server.request('GET', '/sessions?since=1h', undefined, operator);
      const s = (res.body.sessions as any[]).find((x) => x.id === who.session_id);
      return s?.status === 'done' ? s : undefined;
    });
    expect(listed).toMatchObject({ goal: 'Tidy the scratch area on peer', outcome: 'success', pending_approvals: 0 });
    expect(listed.tool_call_count).toBeGreaterThanOrEqual(7);
    // nomos audit, the auditor's own command, reports it like any session.
    const audit = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, 'audit', '--json', '--since', '1h'], { env: { ...process.env, NOMOS_URL: server.url, NOMOS_TOKEN: 'audit-secret-1-long-enough-for-32-chars' }, timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? 1 : 0, stdout, stderr }),
      );
    });
    expect(audit.code, audit.stderr).toBe(0);
    const entry = (JSON.parse(audit.stdout).sessions as any[]).find((e) => e.id === who.session_id);
    expect(entry).toMatchObject({ objective: 'Tidy the scratch area on peer', outcome: 'success' });
    expect(entry.top_tools.map((t: { name: string }) => t.name)).toContain('run');

    const resource = await agent.readResource({ uri: `nomos://sessions/${who.session_id}` });
    const body = JSON.parse((resource.contents[0] as { text: string }).text);
    expect(body.session.goal).toBe('Tidy the scratch area on peer');
    expect(body.tool_calls.some((c: any) => c.name === 'run' && c.client?.name === 'claude-code')).toBe(true);
    expect(body.executions.length).toBe(2);
    expect((await agent.listResources()).resources.map((r) => r.uri)).toContain(`nomos://sessions/${who.session_id}`);

    const prompt = await agent.getPrompt({ name: 'session-review', arguments: { session_id: who.session_id } });
    const said = (prompt.messages[0]!.content as { text: string }).text;
    expect(said).toContain('Failure signatures');
    expect(said).toContain('"goal": "Tidy the scratch area on peer"');
    expect(said).toContain('claude-code 2.1.7');
    await expect(agent.readResource({ uri: `nomos://sessions/${randomUUID()}` })).rejects.toThrow(/there is no session/);
  });
});
