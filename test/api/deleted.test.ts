// Sessions have owners in the read model, and a deleted session leaves every list by default but stays reachable
// for operators and auditors (include_deleted=true, marked deleted) with its transcript, plan, approvals and
// executions, over real HTTP on both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { fetchSessions } from '../../src/cli/audit.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer } from '../support/ssh-peer.ts';

const OP = 'operator-token-0123456789abcdef-0123';
const AGENT = 'agent-token-0123456789abcdef-012345';
const AUDIT = 'auditor-token-0123456789abcdef-0123';
const tokens = parseTokens(`operator:alice:${OP},agent:bot:${AGENT},auditor:carol:${AUDIT}`);
const operator = { authorization: `Bearer ${OP}` };
const agent = { authorization: `Bearer ${AGENT}` };
const auditor = { authorization: `Bearer ${AUDIT}` };

describe.each(databases)('owners and deleted sessions in the read model on $name', (database) => {
  let server: TestServer;
  let kept: string;
  let gone: string;
  let at: number;
  const head = async () => (await server.runtime.store.head()).position;
  const ids = (body: { sessions: Array<{ id: string }> }) => body.sessions.map((s) => s.id);

  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    kept = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    gone = (await server.request('POST', '/sessions', undefined, operator)).body.session_id as string;
    const deleted = await server.request('DELETE', `/sessions/${gone}`, { reason: 'a test' }, operator);
    expect(deleted.status).toBe(200);
    at = deleted.body.position as number;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists each session with its owner, and filters on it', async () => {
    const all = await server.request('GET', `/sessions?min_position=${at}`, undefined, operator);
    expect(all.status).toBe(200);
    expect(all.body.sessions).toEqual([expect.objectContaining({ id: kept, owner: { role: 'agent', id: 'bot' }, deleted: false, deleted_at: null, deleted_by: null })]);
    expect(ids((await server.request('GET', `/sessions?owner=agent:bot&min_position=${at}`, undefined, operator)).body)).toEqual([kept]);
    expect(ids((await server.request('GET', `/sessions?owner=operator:alice&min_position=${at}`, undefined, operator)).body)).toEqual([]);
  });

  it('leaves a deleted session out by default, and shows it marked with include_deleted=true to operators and auditors', async () => {
    for (const as of [operator, auditor]) {
      const res = await server.request('GET', `/sessions?include_deleted=true&min_position=${at}`, undefined, as);
      expect(res.status).toBe(200);
      expect(ids(res.body)).toEqual([gone, kept]);
      expect(res.body.sessions[0]).toMatchObject({ owner: { role: 'operator', id: 'alice' }, deleted: true, deleted_by: { role: 'operator', id: 'alice' } });
      expect(typeof res.body.sessions[0].deleted_at).toBe('string');
      const hidden = await server.request('GET', `/sessions/${gone}?min_position=${at}`, undefined, as);
      expect(hidden.status).toBe(404);
      expect(hidden.body).toMatchObject({ code: 'session_deleted' });
      expect(hidden.body.detail).toContain('include_deleted=true');
      const one = await server.request('GET', `/sessions/${gone}?include_deleted=true&min_position=${at}`, undefined, as);
      expect(one.status).toBe(200);
      expect(one.body.session).toMatchObject({ id: gone, deleted: true });
    }
  });

  it('refuses include_deleted=true to an agent (403), and hides a deleted session from it', async () => {
    const res = await server.request('GET', `/sessions?include_deleted=true&min_position=${at}`, undefined, agent);
    expect(res.status).toBe(403);
    expect((await server.request('GET', `/sessions/${gone}?min_position=${at}`, undefined, agent)).status).toBe(404);
    for (const path of ['', '/tool_calls', '/plan']) {
      const res = await server.request('GET', `/sessions/${gone}${path}?include_deleted=true`, undefined, agent);
      expect(res.status, path).toBe(403);
    }
  });

  it("reaches deleted sessions through nomos audit's --include-deleted, for an auditor, and refuses an agent", async () => {
    const env = (token: string) => ({ NOMOS_URL: server.url, NOMOS_TOKEN: token });
    expect((await fetchSessions({ since: '7d' }, env(AUDIT))).sessions.map((s) => s.id)).toEqual([kept]);
    expect((await fetchSessions({ since: '7d', includeDeleted: true }, env(AUDIT))).sessions.map((s) => s.id)).toEqual([gone, kept]);
    await expect(fetchSessions({ since: '7d', includeDeleted: true }, env(AGENT))).rejects.toThrow(/403|forbidden|deleted/);
  });

  it('answers a bad include_deleted or owner with a 400 naming it, and appends nothing', async () => {
    const before = await head();
    for (const query of ['include_deleted=yes', 'owner=auditor:carol', 'owner=bot']) {
      const res = await server.request('GET', `/sessions?${query}`, undefined, operator);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(query.split('=')[0]!);
    }
    expect(await head()).toBe(before);
  });
});

// A deleted session's approvals and executions, over a real SSH server: deleting cancels the pending approval
// (no sweep or operator acts on it later), lists and lookups leave them out, include_deleted=true shows them
// marked to operators and auditors, and an agent is refused.
describe.each(databases)("a deleted session's approvals and executions on $name", (database) => {
  let peer: SshPeer;
  let server: TestServer;
  let session: string;
  let ran: string;
  let waiting: { approval_id: string; execution_id: string };
  let at: number;

  beforeAll(async () => {
    peer = await startSshPeer();
    server = await startTestServer(database, { tokens, executor: new SshExecutor({ privateKey: peer.privateKey }) });
    const reg = await server.request('POST', '/entities', { entities: [{ slug: 'host:peer', type: 'host', ssh: { host: peer.host.address, port: peer.host.port, user: peer.host.user } }] }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    session = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    const run = (command: string) => server.request('POST', `/sessions/${session}/commands`, { type: 'run', target: 'host:peer', command }, agent);
    const read = await run('uptime');
    expect(read.body).toMatchObject({ status: 'succeeded' });
    ran = read.body.execution_id as string;
    const change = await run('touch /tmp/nomos-deleted-never-runs');
    expect(change.body).toMatchObject({ status: 'approval_required' });
    waiting = { approval_id: change.body.approval_id as string, execution_id: change.body.execution_id as string };
    const deleted = await server.request('DELETE', `/sessions/${session}`, { reason: 'a test' }, operator);
    expect(deleted.status).toBe(200);
    expect(deleted.body.events).toEqual(['ApprovalCancelled', 'SessionDeleted']);
    at = deleted.body.position as number;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await peer?.close();
  });

  it('leaves them out of the approvals list and lookups by default', async () => {
    const list = await server.request('GET', `/approvals?min_position=${at}`, undefined, operator);
    expect(list.status).toBe(200);
    expect(list.body.approvals.map((a: { id: string }) => a.id)).not.toContain(waiting.approval_id);
    const one = await server.request('GET', `/executions/${ran}?min_position=${at}`, undefined, operator);
    expect(one.status).toBe(404);
    expect(one.body).toMatchObject({ code: 'session_deleted' });
    expect((await server.request('GET', `/sessions/${session}/executions?min_position=${at}`, undefined, auditor)).body).toMatchObject({ code: 'session_deleted' });
  });

  it('shows them marked with include_deleted=true, the approval cancelled by the deletion', async () => {
    for (const as of [operator, auditor]) {
      const list = await server.request('GET', `/approvals?include_deleted=true&session_id=${session}&min_position=${at}`, undefined, as);
      expect(list.status).toBe(200);
      expect(list.body.approvals).toEqual([expect.objectContaining({ id: waiting.approval_id, status: 'cancelled', decision_reason: 'session deleted', session_deleted: true })]);
      const one = await server.request('GET', `/executions/${ran}?include_deleted=true&min_position=${at}`, undefined, as);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ status: 'succeeded', session_deleted: true });
      const page = await server.request('GET', `/sessions/${session}/executions?include_deleted=true&min_position=${at}`, undefined, as);
      expect(page.status).toBe(200);
      expect(page.body.executions.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([
        [ran, 'succeeded'],
        [waiting.execution_id, 'cancelled'],
      ]);
      const calls = await server.request('GET', `/sessions/${session}/tool_calls?include_deleted=true&min_position=${at}`, undefined, as);
      expect(calls.status).toBe(200);
      const detail = await server.request('GET', `/sessions/${session}?include_deleted=true&min_position=${at}`, undefined, as);
      expect(detail.body.session).toMatchObject({ deleted: true, owner: { role: 'agent', id: 'bot' } });
    }
  });

  it('refuses include_deleted=true to an agent, and nothing is left for a sweep or an operator to act on', async () => {
    for (const path of ['/approvals', `/executions/${ran}`, `/sessions/${session}/executions`]) {
      expect((await server.request('GET', `${path}?include_deleted=true`, undefined, agent)).status, path).toBe(403);
    }
    const approve = await server.request('POST', `/approvals/${waiting.approval_id}/approve`, undefined, operator);
    expect(approve.status).toBeGreaterThanOrEqual(400);
    expect(approve.status).toBeLessThan(500);
    const pending = await server.runtime.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM approvals WHERE status = 'pending'`);
    expect(Number(pending.rows[0]!.n)).toBe(0);
  });
});
