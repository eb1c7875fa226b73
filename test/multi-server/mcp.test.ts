// One MCP client, two real `nomos serve` processes on one PostgreSQL: its MCP session lives in the database, so
// either server answers any of its requests, concurrent first calls on both agree on one Nomos session, and
// after the server it began on is killed (SIGKILL) it carries on at the other, still named and in the same
// session. Needs PostgreSQL (two processes cannot share an embedded PGlite directory): without DATABASE_URL the
// suite is reported skipped, saying so.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresDatabase, type TestDb } from '../support/databases.ts';
import { type ServeProcess, startServeProcess } from '../support/serve-process.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

/** Auth is off on these servers (loopback): a client is recorded as agent:<its clientInfo name>. */
const CLIENT = { name: 'codex-box', version: '0.9.1' };
const AS_AGENT = {};
const answer = (result: CallToolResult): any => JSON.parse((result.content.at(-1) as { text: string }).text);

describe.skipIf(postgresDatabase === null)('MCP across two servers on one PostgreSQL (skipped without DATABASE_URL: two processes cannot share PGlite)', () => {
  let testDb: TestDb;
  let peer: SshPeer;
  let a: ServeProcess;
  let b: ServeProcess;

  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    peer = await startSshPeer();
    const dir = mkdtempSync(join(tmpdir(), 'nomos-mcp-two-'));
    const key = join(dir, 'id_ed25519');
    writeFileSync(key, peer.privateKey, { mode: 0o600 });
    const env = { DATABASE_URL: testDb.url!, NOMOS_SSH_KEY: key, NOMOS_RUN_WAIT_MS: '3000', NOMOS_DATA_DIR: join(dir, 'unused') };
    [a, b] = await Promise.all([startServeProcess(env), startServeProcess(env)]);
    const reg = await a.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) });
    expect(reg.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((s) => s.stop('SIGKILL')));
    await peer?.close();
    await testDb?.close();
  });

  /** A client of `server` that carries on an MCP session begun elsewhere (no new handshake). */
  const resume = async (server: ServeProcess, sessionId: string, headers: Record<string, string> = AS_AGENT) => {
    const client = new Client(CLIENT);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { sessionId, requestInit: { headers } }));
    return client;
  };

  it('shares the MCP session: concurrent first calls on both servers make one Nomos session; after SIGKILL of the first server the client carries on at the other', async () => {
    const first = new Client(CLIENT);
    const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: AS_AGENT } });
    await first.connect(transport);
    const mcpSession = transport.sessionId!;
    expect(mcpSession).toMatch(/^[0-9a-f-]{36}$/);
    const onB = await resume(b, mcpSession);

    // The first calls, at once, on both servers: one binding wins, both are recorded in the same session.
    const [ra, rb] = (await Promise.all([
      first.callTool({ name: 'classify_command', arguments: { command: 'df -h' } }),
      onB.callTool({ name: 'classify_command', arguments: { command: 'zfs destroy tank/old' } }),
    ])) as [CallToolResult, CallToolResult];
    const sessionId = ra._meta?.['nomos/session_id'] as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(rb._meta?.['nomos/session_id']).toBe(sessionId);
    expect(answer(rb)).toMatchObject({ risk_class: 'destructive' });

    // A caller cannot claim another actor on /mcp.
    await expect(resume(b, mcpSession, { 'x-nomos-actor': 'agent:someone-else' }).then((c) => c.callTool({ name: 'whoami', arguments: {} }))).rejects.toThrow(/X-Nomos-Actor is not taken on \/mcp/);

    await a.stop('SIGKILL');
    const run = (await onB.callTool({ name: 'run', arguments: { target: 'host:peer', command: 'echo still-here' } })) as CallToolResult;
    expect(answer(run)).toMatchObject({ status: 'succeeded' });
    expect(answer(run).stdout).toContain('still-here');
    expect(answer((await onB.callTool({ name: 'whoami', arguments: {} })) as CallToolResult)).toMatchObject({ agent: 'codex-box', session_id: sessionId, client: CLIENT });

    const calls = await until('the tool calls in the read model', async () => {
      const res = await b.request('GET', `/sessions/${sessionId}/tool_calls`);
      return res.status === 200 && res.body.length === 4 && res.body.every((c: { status: string }) => c.status === 'completed') ? (res.body as any[]) : undefined;
    });
    expect(calls.map((c) => c.name).sort()).toEqual(['classify_command', 'classify_command', 'run', 'whoami']);
    for (const c of calls) expect(c).toMatchObject({ actor: { role: 'agent', id: 'codex-box' }, client: CLIENT });
    const sessions = (await b.request('GET', '/sessions')).body.sessions as Array<{ id: string }>;
    expect(sessions.map((s) => s.id)).toEqual([sessionId]);
    await onB.close();
  }, 60_000);
});
