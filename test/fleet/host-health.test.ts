// A host's health as the API shows it, from what really happened over SSH: a command on a host whose port is
// closed is refused as unreachable and the host shows unreachable with the error and when; a command on a real
// SSH server shows it reachable with its last contact; the reachability check probes both, running nothing,
// and records what it found; a retired host is no longer checked.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { SshExecutor } from '../../src/adapters/ssh/executor.ts';
import { hostProbe } from '../../src/adapters/ssh/handshake.ts';
import type { HostProbe } from '../../src/ports/host-probe.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';
import { until } from '../support/until.ts';
import { type SshPeer, startSshPeer, sshOf } from '../support/ssh-peer.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars');
const agent = { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars' };
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  await new Promise((ok) => server.close(ok));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe.each(databases)('host health on $name', (database) => {
  let peer: SshPeer;
  let server: TestServer;
  let session: string;
  let port: number;

  beforeAll(async () => {
    peer = await startSshPeer();
    port = await closedPort();
    server = await startTestServer(database, { tokens, executor: new SshExecutor({ privateKey: peer.privateKey, connectTimeoutMs: 3_000 }), execution: { shortWaitMs: 10_000 } });
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:old-nas', type: 'host', ssh: { host: '127.0.0.1', port, user: 'root' } },
        { slug: 'host:peer', type: 'host', ssh: sshOf(peer) },
        { slug: 'lxc:box', type: 'lxc', parent: 'host:peer', pve_id: 132 },
      ],
    }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    session = (await server.request('POST', '/sessions', undefined, agent)).body.session_id;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await peer?.close();
  });

  const run = async (target: string, command: string) => {
    const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target, command }, agent);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const entity = async (slug: string, minPosition = 0) => {
    const res = await server.request('GET', `/entities/${slug}?min_position=${minPosition}`, undefined, agent);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.entity;
  };

  it('knows nothing of a host never tried', async () => {
    expect((await entity('host:old-nas')).health).toEqual({ reachable: null, last_contact_at: null, last_failure_at: null, last_error: null, checked_at: null });
    expect((await entity('lxc:box')).health).toBeNull();
  });

  it('shows a host whose connections are refused as unreachable, with the error and when', async () => {
    const before = new Date().toISOString();
    const res = await run('host:old-nas', 'uptime');
    expect(res).toMatchObject({ status: 'refused', reason: 'unreachable' });
    const health = (await entity('host:old-nas', res.position)).health;
    expect(health.reachable).toBe(false);
    expect(health.last_error).toMatch(/ECONNREFUSED|refused/i);
    expect(health.last_error).toContain('host:old-nas');
    expect(health.last_failure_at >= before).toBe(true);
    expect(health.last_contact_at).toBeNull();
    // The list says the same.
    const listed = (await server.request('GET', '/entities', undefined, agent)).body.entities.find((e: { slug: string }) => e.slug === 'host:old-nas');
    expect(listed.health).toEqual(health);
  });

  it('shows the last contact of a host a command ran on, whatever its exit code; a guest counts for its host', async () => {
    const before = new Date().toISOString();
    const failed = await run('host:peer', 'ls /nonexistent-nomos-dir');
    expect(failed.status).toBe('failed');
    const health = (await entity('host:peer', failed.position)).health;
    expect(health).toMatchObject({ reachable: true, last_failure_at: null, last_error: null });
    expect(health.last_contact_at >= before).toBe(true);
    const inGuest = await run('lxc:box', 'pct exec 132 -- true');
    expect(inGuest.status).toBe('succeeded');
    expect((await entity('host:peer', inGuest.position)).health.last_contact_at > health.last_contact_at).toBe(true);
  });

  it('checks reachability without running anything, and records each host’s answer', async () => {
    const seen: string[] = [];
    const ssh = hostProbe(peer.privateKey);
    const probe: HostProbe = { kind: ssh.kind, reach: (host, ms) => (seen.push(host.slug), ssh.reach(host, ms)) };
    const before = new Date().toISOString();
    server.runtime.startReachability(300, { probe, timeoutMs: 3_000 });
    const [nas, reached] = await until('both hosts checked', async () => {
      const [a, b] = [(await entity('host:old-nas')).health, (await entity('host:peer')).health];
      return a.checked_at !== null && b.checked_at !== null && a.checked_at >= before && b.checked_at >= before ? [a, b] : undefined;
    });
    expect(nas).toMatchObject({ reachable: false });
    expect(nas.last_error).toMatch(/ECONNREFUSED|refused/i);
    expect(nas.last_failure_at).toBe(nas.checked_at);
    expect(reached).toMatchObject({ reachable: true, last_contact_at: reached.checked_at });
    // Hosts only: the guest is reached through its host.
    expect(seen).not.toContain('lxc:box');
  });

  it('stops checking a retired host', async () => {
    const retired = await server.request('DELETE', '/entities/host:old-nas', { reason: 'decommissioned' }, operator);
    expect(retired.status, JSON.stringify(retired.body)).toBe(200);
    await entity('host:old-nas', retired.body.position);
    const nextRound = async () => {
      const now = (await entity('host:peer')).health.checked_at;
      await until('another round', async () => ((await entity('host:peer')).health.checked_at > now ? true : undefined));
    };
    // A round under way when it was retired may still have checked it; the ones after do not.
    await nextRound();
    const last = (await entity('host:old-nas')).health.checked_at;
    await nextRound();
    await nextRound();
    expect((await entity('host:old-nas')).health.checked_at).toBe(last);
  });
});

describe('the host probe without a key', () => {
  it('waits for the SSH greeting, and says why a closed port is not one', async () => {
    const peer = await startSshPeer();
    try {
      const probe = hostProbe(null);
      expect(probe.kind).toBe('tcp');
      await probe.reach(peer.host, 3_000);
      await expect(probe.reach({ ...peer.host, slug: 'host:closed', port: await closedPort() }, 3_000)).rejects.toThrow(/host:closed.*ECONNREFUSED/);
    } finally {
      await peer.close();
    }
  });
});
