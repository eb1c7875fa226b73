// An outcome the log contradicts: a session whose only change was denied, completed as success, is flagged
// outcome_disputed with the evidence (the change, its target and how it ended) in the sessions read model,
// filterable with GET /sessions?outcome_disputed=, and shown by the audit report; a read that ran does not
// count, a partial outcome is not disputed, and a reopen clears it. A real server and SSH target on each database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { auditReport } from '../../src/cli/audit.ts';
import { formatReport } from '../../src/cli/audit-report.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const agent = { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars' };
const auditor = { authorization: 'Bearer audit-secret-1-long-enough-for-32-chars' };

describe.each(databases)('disputed outcomes on $name', (database) => {
  let peer: SshPeer;
  let server: TestServer;
  const ids = { disputed: '', partial: '', noChange: '' };

  const command = async (id: string, body: Record<string, unknown>) => {
    const res = await server.request('POST', `/sessions/${id}/commands`, body, agent);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  /** A session whose one change (a chown) the operator denied, then completed as `outcome`. */
  const deniedThen = async (outcome: 'success' | 'partial', goal: string) => {
    const id = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    await command(id, { type: 'set_goal', goal });
    const read = await command(id, { type: 'run', target: 'host:peer', command: 'cat /etc/hostname' });
    expect(read).toMatchObject({ status: 'succeeded', verdict: { risk_class: 'reversible_low' } });
    const asked = await command(id, { type: 'run', target: 'host:peer', command: 'chown backup /srv/backups' });
    expect(asked).toMatchObject({ status: 'approval_required' });
    const denied = await server.request('POST', `/approvals/${asked.approval_id}/deny`, { reason: 'not during backups' }, operator);
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    const done = await command(id, { type: 'complete_task', outcome, summary: 'Changed the owner of /srv/backups.' });
    return { id, executionId: asked.execution_id as string, position: done.position as number };
  };
  const session = async (id: string, position: number) => (await server.request('GET', `/sessions/${id}?min_position=${position}`, undefined, auditor)).body.session;
  const listed = async (query: string) => {
    const res = await server.request('GET', `/sessions?${query}`, undefined, auditor);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.sessions as Array<{ id: string }>).map((s) => s.id);
  };

  beforeAll(async () => {
    peer = await startSshPeer();
    server = await startTestServer(database, { tokens, executor: new SshExecutor({ privateKey: peer.privateKey }), execution: { shortWaitMs: 5_000, approvalTtlMs: 3_600_000 } });
    const reg = await server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(peer) }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await peer?.close();
  });

  it('flags a success whose only change was denied, with the evidence', async () => {
    const { id, executionId, position } = await deniedThen('success', 'Give the backup user /srv/backups');
    ids.disputed = id;
    const s = await session(id, position);
    expect(s).toMatchObject({
      outcome: 'success',
      blocker: null,
      outcome_disputed: true,
      closed_by: { role: 'agent', id: 'nomos' },
      dispute: {
        detail: 'closed as success, but its one change did not take effect: 1 denied',
        changes: [{ execution_id: executionId, target: 'host:peer', command: 'chown backup /srv/backups', risk_class: 'config_mutation', status: 'denied' }],
      },
    });
  });

  it('does not flag a partial outcome, nor a success that asked for no change', async () => {
    const partial = await deniedThen('partial', 'Give the backup user /srv/backups, or say why not');
    ids.partial = partial.id;
    expect(await session(partial.id, partial.position)).toMatchObject({ outcome: 'partial', blocker: 'approval_denied', outcome_disputed: false, dispute: null });
    const id = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    ids.noChange = id;
    await command(id, { type: 'run', target: 'host:peer', command: 'cat /etc/hostname' });
    const done = await command(id, { type: 'complete_task', outcome: 'success', summary: 'Read the hostname.' });
    expect(await session(id, done.position)).toMatchObject({ outcome: 'success', outcome_disputed: false, dispute: null });
  });

  it('filters on it, and refuses a value that is not true or false', async () => {
    expect(await listed('outcome_disputed=true')).toEqual([ids.disputed]);
    const others = await listed('outcome_disputed=false');
    expect(others).toEqual(expect.arrayContaining([ids.partial, ids.noChange]));
    expect(others).not.toContain(ids.disputed);
    expect(await listed('outcome_disputed=true&outcome=partial')).toEqual([]);
    expect(await listed('outcome_disputed=true&fields=outcome_disputed,dispute')).toEqual([ids.disputed]);
    const bad = await server.request('GET', '/sessions?outcome_disputed=yes', undefined, auditor);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/outcome_disputed must be true or false/);
  });

  it('shows it in the audit report', async () => {
    const report = await auditReport({ since: '1h' }, { NOMOS_URL: server.url, NOMOS_TOKEN: 'audit-secret-1-long-enough-for-32-chars' });
    expect(report.summary.disputed).toBe(1);
    expect(report.sessions.find((e) => e.id === ids.disputed)?.dispute).toBe('closed as success, but its one change did not take effect: 1 denied');
    expect(report.sessions.find((e) => e.id === ids.partial)?.dispute).toBeNull();
    const text = formatReport(report);
    expect(text).toContain(`Session: ${ids.disputed.slice(0, 8)}`);
    expect(text).toContain('  Outcome disputed: closed as success, but its one change did not take effect: 1 denied');
    expect(text).toContain('  Disputed outcomes: 1');
  });

  it('clears the dispute when the session is reopened', async () => {
    const again = await command(ids.disputed, { type: 'post_user_message', text: 'it did not work, did it?' });
    expect(await session(ids.disputed, again.position)).toMatchObject({ status: 'active', outcome: null, outcome_disputed: false, dispute: null, closed_by: null });
    await until('the filter to drop it', async () => ((await listed('outcome_disputed=true')).length === 0 ? true : undefined));
  });
});
