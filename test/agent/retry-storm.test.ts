// The old system's retry storm, replayed by a scripted model that keeps retrying until the system stops it:
// against a host that refuses connections, a command that times out, and one failing command wrapped three ways
// (sh -c, sudo, pct exec on the host for its container). Each is stopped at the third attempt with retry_cap
// as an event, and the session that ends partial says why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { FakeOpenAi, ScriptedReply } from '../support/fake-openai.ts';
import { freePort } from '../support/cli-process.ts';
import type { TestServer } from '../support/server.ts';
import { type SshPeer, sshOf } from '../support/ssh-peer.ts';
import { readSse } from '../support/sse-reader.ts';
import { until } from '../support/until.ts';

/** How many attempts the scripted model makes at most before it gives up by itself (the old system's 20). */
const STUBBORN = 8;

describe.each(databases)('a retry storm on $name', (database) => {
  let peer: SshPeer;
  let llm: FakeOpenAi;
  let server: TestServer;
  let world: AgentWorld;

  beforeAll(async () => {
    world = await startAgentWorld(database, {
      execution: { shortWaitMs: 5_000, hardLimitMs: 1_500, approvalTtlMs: 60_000, hungAfterMs: 60_000 },
    });
    ({ peer, llm, server } = world);
    const ssh = sshOf(peer);
    const gone = { ...ssh, port: await freePort() }; // nothing listens there: connection refused
    for (const entity of [
      { slug: 'host:peer', type: 'host', ssh },
      { slug: 'host:gone', type: 'host', ssh: gone },
      { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 101 },
    ]) {
      const reg = await server.request('POST', '/entities', entity);
      expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    }
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  /** The model runs attempts[i % n] until a result says retry_cap (or it has tried STUBBORN times), then gives up. */
  const storm = async (attempts: Array<{ target: string; command: string }>) => {
    let tries = 0;
    let stopped = false;
    llm.respond((request): ScriptedReply => {
      const last = [...request.messages].reverse().find((m: any) => m.role === 'tool');
      if (!stopped && last && (/retry_cap/.test(last.content) || tries >= STUBBORN)) {
        stopped = true;
        return { toolCalls: [{ name: 'complete_task', arguments: { outcome: 'partial', summary: 'I stopped after the same command kept failing.' } }] };
      }
      if (stopped) return { content: 'I stopped after the same command failed; it needs a look before anyone runs it again.' };
      return { toolCalls: [{ name: 'run', arguments: attempts[tries++ % attempts.length] }] };
    });
    const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'make it work, try as often as you like' }) });
    const messages = await readSse(res, (m) => m.type === 'done', 60_000);
    const sessionId = messages[0]!.session_id;
    const done = messages.at(-1)!;
    const events: any[] = (await server.request('GET', `/sessions/${sessionId}/events`)).body.events;
    const view = await until('the session in the read model', async () => {
      const r = await server.request('GET', `/sessions/${sessionId}?min_position=${done.id}`);
      return r.status === 200 && r.body.session.outcome === 'partial' ? r.body.session : undefined;
    });
    return { events, view, tries };
  };

  const expectStoppedAtThird = ({ events, view, tries }: Awaited<ReturnType<typeof storm>>) => {
    const requested = events.filter((e) => e.type === 'ExecutionRequested');
    expect(tries).toBe(3);
    expect(requested).toHaveLength(3);
    const third = requested[2]!.data.execution_id;
    const refusals = events.filter((e) => e.type === 'ExecutionRefused' && e.data.execution_id === third);
    expect(refusals.map((e) => e.data.reason)).toEqual(['retry_cap']);
    expect(refusals[0]!.data.detail).toMatch(/strace|ps|lsof|operator/);
    expect(events.filter((e) => e.type === 'ExecutionStarted' && e.data.execution_id === third)).toHaveLength(0);
    expect(view.blocker).not.toBeNull();
    return view;
  };

  it('against a host that refuses connections: stopped at the third attempt, blocker set', async () => {
    const result = await storm([{ target: 'host:gone', command: 'cat /etc/hostname' }]);
    const view = expectStoppedAtThird(result);
    const unreachable = result.events.filter((e) => e.type === 'ExecutionRefused' && e.data.reason === 'unreachable');
    expect(unreachable).toHaveLength(2);
    expect(['target_unreachable', 'tool_error']).toContain(view.blocker);
  });

  it('against a command that times out: stopped at the third attempt', async () => {
    const result = await storm([{ target: 'host:peer', command: 'sleep 5' }]);
    expectStoppedAtThird(result);
    expect(result.events.filter((e) => e.type === 'ExecutionTimedOut')).toHaveLength(2);
  });

  it('against one failing command wrapped three ways: stopped at the third attempt', async () => {
    const result = await storm([
      { target: 'host:peer', command: 'cat /nonexistent/nomos-storm' },
      { target: 'host:peer', command: "sh -c 'cat /nonexistent/nomos-storm'" },
      { target: 'host:peer', command: 'sudo cat /nonexistent/nomos-storm' },
    ]);
    expectStoppedAtThird(result);
    expect(result.events.filter((e) => e.type === 'ExecutionFailed')).toHaveLength(2);
  });

  it('and through the container: pct exec on its host is the lxc target itself', async () => {
    const result = await storm([
      { target: 'lxc:box', command: 'cat /nonexistent/nomos-storm-box' },
      { target: 'host:peer', command: 'pct exec 101 -- cat /nonexistent/nomos-storm-box' },
      { target: 'host:peer', command: "pct exec 101 -- sh -c 'cat /nonexistent/nomos-storm-box'" },
    ]);
    expectStoppedAtThird(result);
  });
});
