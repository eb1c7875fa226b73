// Sessions end: the sweep closes a session idle past NOMOS_SESSION_IDLE_CLOSE as partial, blocker user_abandoned,
// by the system actor, through an event; a session with a pending approval or a running turn is left, as is one
// active meanwhile; off closes nothing; reopening works as it always has. A real server on each database; the
// sweep is the one the runtime's sweeper runs, with a short limit.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { runSessionCommand } from '../../src/commands/session.ts';
import { loadConfig } from '../../src/config.ts';
import { sweep } from '../../src/execution/sweeps.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';
import { until } from '../support/until.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const agent = { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars' };
const IDLE_MS = 600;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('NOMOS_SESSION_IDLE_CLOSE', () => {
  it('defaults to 24 h, reads durations, and off (or 0) turns the close off', () => {
    expect(loadConfig({}).sessionIdleCloseMs).toBe(24 * 3600_000);
    expect(loadConfig({ NOMOS_SESSION_IDLE_CLOSE: '90m' }).sessionIdleCloseMs).toBe(90 * 60_000);
    expect(loadConfig({ NOMOS_SESSION_IDLE_CLOSE: '2d' }).sessionIdleCloseMs).toBe(2 * 86_400_000);
    expect(loadConfig({ NOMOS_SESSION_IDLE_CLOSE: 'off' }).sessionIdleCloseMs).toBeNull();
    expect(loadConfig({ NOMOS_SESSION_IDLE_CLOSE: '0' }).sessionIdleCloseMs).toBeNull();
    expect(() => loadConfig({ NOMOS_SESSION_IDLE_CLOSE: 'a day' })).toThrow(/NOMOS_SESSION_IDLE_CLOSE[\s\S]*"a day" is not a duration/);
  });
});

describe.each(databases)('closing idle sessions on $name', (database) => {
  let peer: SshPeer;
  let server: TestServer;
  const session = async (goal: string) => {
    const id = (await server.request('POST', '/sessions', undefined, agent)).body.session_id as string;
    const set = await server.request('POST', `/sessions/${id}/commands`, { type: 'set_goal', goal }, agent);
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    return id;
  };
  const read = async (id: string) => (await server.request('GET', `/sessions/${id}`, undefined, operator)).body.session;
  const events = async (id: string) => ((await server.request('GET', `/sessions/${id}/events?limit=500`, undefined, operator)).body.events as any[]);
  const eventCount = async () => Number((await server.runtime.db.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n);
  const sweepWith = (idleCloseMs: number | null) => sweep(server.runtime.commandDeps, server.runtime.executions, { idleCloseMs });

  beforeAll(async () => {
    peer = await startSshPeer();
    server = await startTestServer(database, { tokens, executor: new SshExecutor({ privateKey: peer.privateKey }), execution: { approvalTtlMs: 3_600_000 } });
    const reg = await server.request('POST', '/entities', { slug: 'host:far', type: 'host', ssh: sshOf(peer) }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await peer?.close();
  });

  it('closes an idle session as partial, user_abandoned, by the system, and leaves a pending approval, a running turn and a fresh session', async () => {
    const idle = await session('Rotate the backup keys');
    const waiting = await session('Change the owner of /srv');
    const asked = await server.request('POST', `/sessions/${waiting}/commands`, { type: 'run', target: 'host:far', command: 'chown backup /srv' }, agent);
    expect(asked.body, JSON.stringify(asked.body)).toMatchObject({ status: 'approval_required' });
    const turning = await session('Think for a long time');
    await runSessionCommand(server.runtime.commandDeps, turning, { type: 'start_turn', turn_id: randomUUID(), trigger: 'user_message' }, { actor: { role: 'system', id: 'agent' } });

    // Nothing is a minute old yet.
    expect((await sweepWith(60_000)).idleClosed).toBe(0);
    await sleep(IDLE_MS + 200);
    const fresh = await session('Just asked');
    await until('the read model to show every session idle', async () => ((await read(turning)).last_active_at < new Date(Date.now() - IDLE_MS).toISOString() ? true : undefined));

    expect((await sweepWith(IDLE_MS)).idleClosed).toBe(1);
    const closed = await until('the idle session closed in the read model', async () => {
      const s = await read(idle);
      return s.status === 'done' ? s : undefined;
    });
    expect(closed).toMatchObject({
      outcome: 'partial',
      blocker: 'user_abandoned',
      blocker_evidence: { source: 'event' },
      closed_by: { role: 'system', id: 'executor' },
      outcome_disputed: false,
      dispute: null,
    });
    expect(closed.summary).toMatch(/^No activity for 1 s: the task was left unfinished\.$/);
    const last = (await events(idle)).at(-1);
    expect(last).toMatchObject({ type: 'TaskCompleted', data: { outcome: 'partial', status: 'done' }, metadata: { actor: { role: 'system', id: 'executor' } } });

    for (const open of [waiting, turning, fresh]) expect((await read(open)).status).toBe('active');
    expect((await read(waiting)).pending_approvals).toBe(1);

    // A second sweep closes nothing twice: the closed session's stream gains nothing (the waiting and the turning
    // ones are still left, whatever their age).
    const before = (await events(idle)).length;
    await sweepWith(IDLE_MS);
    expect((await events(idle)).length).toBe(before);
    for (const open of [waiting, turning]) expect((await read(open)).status).toBe('active');

    const list = await server.request('GET', '/sessions?blocker=user_abandoned', undefined, operator);
    expect(list.body.sessions.map((s: { id: string }) => s.id)).toEqual([idle]);
  });

  it('reopens a closed idle session as before: a new message, active again, the blocker gone', async () => {
    const id = await session('Check the disks');
    await sleep(IDLE_MS + 200);
    await until('the session to be idle in the read model', async () => ((await read(id)).last_active_at < new Date(Date.now() - IDLE_MS).toISOString() ? true : undefined));
    expect((await sweepWith(IDLE_MS)).idleClosed).toBeGreaterThanOrEqual(1);
    await until('closed', async () => ((await read(id)).status === 'done' ? true : undefined));
    const again = await server.request('POST', `/sessions/${id}/commands`, { type: 'post_user_message', text: 'still there?' }, agent);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.events).toEqual(['SessionReopened', 'UserMessagePosted']);
    const reopened = await until('reopened', async () => {
      const s = await read(id);
      return s.status === 'active' ? s : undefined;
    });
    expect(reopened).toMatchObject({ outcome: null, blocker: null, closed_by: null, closed_at: null });
  });

  it('closes nothing when off', async () => {
    const id = await session('Leave me be');
    await sleep(IDLE_MS + 200);
    const before = await eventCount();
    expect(await sweepWith(null)).toMatchObject({ idleClosed: 0 });
    expect(await eventCount()).toBe(before);
    expect((await read(id)).status).toBe('active');
  });
});
