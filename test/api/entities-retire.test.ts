// Retiring an entity through the API: an EntityRetired event with who and why, kept in history; off the
// default list, shown with include=retired or state=retired; refused twice (409), for an unknown slug (404),
// and for agents and auditors (403) with nothing appended; no command runs on it or its guests; the agent's
// fleet snapshot does not offer it; a restore brings it back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetSnapshot } from '../../src/agent/fleet-snapshot.ts';
import { parseTokens } from '../../src/api/auth.ts';
import { entityStream } from '../../src/domain/entity/stream.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const operator = { authorization: 'Bearer op-secret-1-long-enough-for-32-chars' };
const agent = { authorization: 'Bearer agent-secret-1-long-enough-for-32-chars' };
const auditor = { authorization: 'Bearer audit-secret-1-long-enough-for-32-chars' };

describe.each(databases)('retiring entities on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
    const reg = await server.request('POST', '/entities', {
      entities: [
        { slug: 'host:old-nas', type: 'host', ssh: { host: '10.0.0.9' } },
        { slug: 'lxc:backup', type: 'lxc', parent: 'host:old-nas', pve_id: 110 },
        { slug: 'host:strong', type: 'host', ssh: { host: '10.0.0.10' } },
      ],
    }, operator);
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  const eventsOf = async (slug: string) => (await server.runtime.store.readStream(entityStream(slug))).events;
  const slugs = async (query = '', min = 0) => {
    const res = await server.request('GET', `/entities?min_position=${min}${query}`, undefined, auditor);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.entities.map((e: { slug: string }) => e.slug);
  };

  it('refuses agents and auditors, appending nothing', async () => {
    const before = (await eventsOf('host:old-nas')).length;
    for (const as of [agent, auditor]) {
      const res = await server.request('DELETE', '/entities/host:old-nas', { reason: 'gone' }, as);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await eventsOf('host:old-nas')).length).toBe(before);
  });

  it('answers 404 for an entity never registered', async () => {
    const res = await server.request('DELETE', '/entities/host:nowhere', undefined, operator);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('unknown_entity');
  });

  it('appends EntityRetired with who and why, and leaves the default list', async () => {
    const res = await server.request('DELETE', '/entities/host:old-nas', { reason: 'decommissioned in May' }, operator);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.events).toEqual(['EntityRetired']);
    const last = (await eventsOf('host:old-nas')).at(-1)!;
    expect(last.type).toBe('EntityRetired');
    expect(last.data).toEqual({ reason: 'decommissioned in May' });
    expect(last.metadata.actor).toEqual({ role: 'operator', id: 'alice' });

    expect(await slugs('', res.body.position)).toEqual(['host:strong', 'lxc:backup']);
    expect(await slugs('&include=retired')).toEqual(['host:old-nas', 'host:strong', 'lxc:backup']);
    expect(await slugs('&state=retired')).toEqual(['host:old-nas']);
    const one = await server.request('GET', '/entities/host:old-nas', undefined, auditor);
    expect(one.body.entity.retired).toMatchObject({ by: 'operator:alice', reason: 'decommissioned in May' });
    expect(one.body.entity.state).toBe('active');
  });

  it('refuses to retire it twice (409), appending nothing', async () => {
    const before = (await eventsOf('host:old-nas')).length;
    const res = await server.request('DELETE', '/entities/host:old-nas', undefined, operator);
    expect(res.status).toBe(409);
    expect(res.body.rule).toBe('already_retired');
    expect((await eventsOf('host:old-nas')).length).toBe(before);
  });

  it('runs no command on it or on its guests, saying why', async () => {
    const session = (await server.request('POST', '/sessions', undefined, agent)).body.session_id;
    for (const target of ['host:old-nas', 'lxc:backup']) {
      const res = await server.request('POST', `/sessions/${session}/commands`, { type: 'run', target, command: 'uptime' }, agent);
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.rule).toBe('entity_retired');
      expect(res.body.detail).toContain('host:old-nas');
      expect(res.body.detail).toContain('retired');
    }
  });

  it('is not offered to the agent in its fleet snapshot', async () => {
    const snapshot = await fleetSnapshot(server.runtime.db);
    expect(snapshot).not.toContain('host:old-nas');
    expect(snapshot).toContain('host:strong');
  });

  it('comes back with a restore', async () => {
    expect((await server.request('POST', '/entities/host:old-nas/restore', { reason: 'back in service' }, agent)).status).toBe(403);
    const res = await server.request('POST', '/entities/host:old-nas/restore', { reason: 'back in service' }, operator);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.events).toEqual(['EntityRestored']);
    expect(await slugs('', res.body.position)).toEqual(['host:old-nas', 'host:strong', 'lxc:backup']);
    expect((await server.request('POST', '/entities/host:old-nas/restore', undefined, operator)).body.rule).toBe('not_retired');
  });
});
