// The inventory API over real HTTP on real databases: operators register one entity or a whole inventory
// (checked whole, appended hosts first, idempotent, updates carrying only what changed), anyone reads it;
// and the execution layer's entry points: resolveTarget, pinHostKey, setEntityState.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokens } from '../../src/api/auth.ts';
import { loadEntity, pinHostKey, registerEntities, resolveTarget, setEntityState } from '../../src/commands/entity.ts';
import { entityStream } from '../../src/domain/entity/stream.ts';
import { NotFound, RuleViolation } from '../../src/domain/messages.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

const tokens = parseTokens('operator:alice:op-secret-1-long-enough-for-32-chars,agent:nomos:agent-secret-1-long-enough-for-32-chars,auditor:audit:audit-secret-1-long-enough-for-32-chars');
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const OPERATOR = as('op-secret-1-long-enough-for-32-chars');

/** An OpenSSH public key whose blob opens with its type name, as a real key's does. */
function sshKey(fill: number): string {
  const name = Buffer.from('ssh-ed25519');
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const blob = Buffer.concat([u32(name.length), name, u32(32), Buffer.alloc(32, fill)]);
  return `ssh-ed25519 ${blob.toString('base64')}`;
}
const KEY_A = sshKey(1);
const KEY_B = sshKey(2);

describe.each(databases)('entities API on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database, { tokens });
  });
  afterAll(async () => {
    await server?.close();
  });

  const head = async () => (await server.runtime.store.head()).position;
  const post = (body: unknown, headers: Record<string, string> = OPERATOR) => server.request('POST', '/entities', body, headers);
  const get = (path: string, headers: Record<string, string> = OPERATOR) => server.request('GET', path, undefined, headers);
  const streamOf = async (slug: string) => (await server.runtime.store.readStream(entityStream(slug))).events;
  const ctx = { actor: { role: 'agent' as const, id: 'nomos' } };

  it('registers one entity sent on its own', async () => {
    const res = await post({ slug: 'host:strong', type: 'host', ssh: { host: '192.168.8.10', host_key: KEY_A } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.entities).toEqual([{ slug: 'host:strong', result: 'created', position: expect.any(Number) }]);
    expect(res.body.position).toBe(res.body.entities[0].position);
    expect((await streamOf('host:strong')).map((e) => e.type)).toEqual(['EntityRegistered', 'HostKeyPinned']);

    const read = await get(`/entities/host:strong?min_position=${res.body.position}`);
    expect(read.status).toBe(200);
    expect(read.body.as_of_position).toBeGreaterThanOrEqual(res.body.position);
    expect(Number(read.headers.get('x-nomos-as-of-position'))).toBe(read.body.as_of_position);
    expect(read.body.entity).toMatchObject({
      slug: 'host:strong',
      type: 'host',
      name: 'strong',
      state: 'active',
      parent: null,
      pve_id: null,
      ssh: { host: '192.168.8.10', port: 22, user: 'root', host_key: KEY_A, host_key_pinned_by: 'operator' },
      attributes: {},
      children: [],
    });
  });

  const inventory = {
    entities: [
      // Guests first on purpose: hosts are registered before them anyway.
      { slug: 'lxc:rclone', type: 'lxc', parent: 'host:weak', pve_id: 132, attributes: { role: 'backup' } },
      { slug: 'vm:zimaos', type: 'vm', parent: 'host:strong', pve_id: 200 },
      { slug: 'host:weak', type: 'host', ssh: { host: '192.168.8.11', port: 2222, user: 'admin' } },
    ],
  };

  it('registers many, hosts before their guests, and answers in payload order', async () => {
    const res = await post(inventory);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.entities.map((e: any) => [e.slug, e.result])).toEqual([
      ['lxc:rclone', 'created'],
      ['vm:zimaos', 'created'],
      ['host:weak', 'created'],
    ]);
    const [rclone, , weak] = res.body.entities;
    expect(weak.position).toBeLessThan(rclone.position);
    expect(res.body.position).toBe(Math.max(...res.body.entities.map((e: any) => e.position)));

    const host = await get(`/entities/host:weak?min_position=${res.body.position}`);
    expect(host.body.entity.children).toEqual(['lxc:rclone']);
    expect(host.body.entity.ssh).toMatchObject({ host: '192.168.8.11', port: 2222, user: 'admin', host_key: null });
    expect((await get('/entities/host:strong')).body.entity.children).toEqual(['vm:zimaos']);
    expect((await get('/entities/lxc:rclone')).body.entity).toMatchObject({ parent: 'host:weak', pve_id: 132, ssh: null, attributes: { role: 'backup' } });
  });

  it('appends nothing for an identical re-registration, and reports where each entity stands', async () => {
    const before = await head();
    const res = await post(inventory);
    expect(res.status).toBe(200);
    expect(res.body.entities.map((e: any) => e.result)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(await head()).toBe(before);
    const last = (await streamOf('lxc:rclone')).at(-1)!;
    expect(res.body.entities[0].position).toBe(last.position);
  });

  it('appends only what changed', async () => {
    const res = await post({
      entities: [
        { slug: 'host:weak', type: 'host', ssh: { host: '192.168.8.11', port: 22, user: 'admin' } },
        { slug: 'lxc:rclone', type: 'lxc', parent: 'host:weak', pve_id: 132, attributes: { role: 'backup', tier: 2 } },
        { slug: 'vm:zimaos', type: 'vm', parent: 'host:strong', pve_id: 200 },
      ],
    });
    expect(res.body.entities.map((e: any) => e.result)).toEqual(['updated', 'updated', 'unchanged']);
    const weak = (await streamOf('host:weak')).at(-1)!;
    expect([weak.type, weak.data]).toEqual(['EntityUpdated', { ssh: { port: 22 } }]);
    expect(weak.metadata).toMatchObject({ actor: { role: 'operator', id: 'alice' }, schema_version: 1 });
    const rclone = (await streamOf('lxc:rclone')).at(-1)!;
    expect([rclone.type, rclone.data]).toEqual(['EntityUpdated', { attributes: { role: 'backup', tier: 2 } }]);
    const read = await get(`/entities/lxc:rclone?min_position=${res.body.position}`);
    expect(read.body.entity.attributes).toEqual({ role: 'backup', tier: 2 });
  });

  it('refuses a guest whose parent is unknown and appends nothing, not even the valid entities', async () => {
    const before = await head();
    const res = await post({
      entities: [
        { slug: 'host:new', type: 'host', ssh: { host: '10.1.1.1' } },
        { slug: 'lxc:orphan', type: 'lxc', parent: 'host:ghost', pve_id: 300 },
      ],
    });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.code).toBe('unknown_parent');
    expect(res.body.detail).toMatch(/entities\.1\.parent.*host:ghost.*not registered/);
    expect(await head()).toBe(before);
    expect(await streamOf('host:new')).toEqual([]);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['duplicate slugs', { entities: [{ slug: 'host:d', type: 'host', ssh: { host: 'a' } }, { slug: 'host:d', type: 'host', ssh: { host: 'b' } }] }, /body\.entities\.1\.slug: duplicate slug host:d/],
    ['a malformed slug', { entities: [{ slug: 'lxc:bad name', type: 'lxc', parent: 'host:strong', pve_id: 1 }] }, /body\.entities\.0\.slug/],
    ['a slug whose prefix is not its type', { slug: 'vm:x', type: 'lxc', parent: 'host:strong', pve_id: 1 }, /body\.entities\.0\.slug: slug must be lxc:NAME/],
    ['a malformed host_key', { entities: [{ slug: 'host:k', type: 'host', ssh: { host: 'a', host_key: 'ssh-ed25519 not-base64!' } }] }, /body\.entities\.0\.ssh\.host_key/],
    ['a host_key of another type than its data', { slug: 'host:k', type: 'host', ssh: { host: 'a', host_key: KEY_A.replace('ssh-ed25519', 'ssh-rsa') } }, /ssh\.host_key.*not a ssh-rsa key/],
    ['pve_id 0', { entities: [{ slug: 'lxc:z', type: 'lxc', parent: 'host:strong', pve_id: 0 }] }, /body\.entities\.0\.pve_id/],
    ['pve_id not an integer', { entities: [{ slug: 'lxc:z', type: 'lxc', parent: 'host:strong', pve_id: 1.5 }] }, /body\.entities\.0\.pve_id/],
    ['an unknown field', { slug: 'host:u', type: 'host', ssh: { host: 'a' }, colour: 'red' }, /colour/],
    ['a bad state', { slug: 'host:u', type: 'host', ssh: { host: 'a' }, state: 'gone' }, /body\.entities\.0\.state/],
  ];

  it.each(bad)('refuses %s with 400 naming the field, and appends nothing', async (_name, body, message) => {
    const before = await head();
    const res = await post(body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.detail).toMatch(message);
    expect(await head()).toBe(before);
  });

  it('lets only operators register', async () => {
    const before = await head();
    const body = { slug: 'host:sneaky', type: 'host', ssh: { host: '10.9.9.9' } };
    const agent = await post(body, as('agent-secret-1-long-enough-for-32-chars'));
    expect(agent.status).toBe(403);
    expect(agent.body.detail).toMatch(/agent may not register entities/);
    const auditor = await post(body, as('audit-secret-1-long-enough-for-32-chars'));
    expect(auditor.status).toBe(403);
    expect(await head()).toBe(before);
    expect((await post(body, {})).status).toBe(401);
    // Reading is open to every role.
    expect((await get('/entities', as('audit-secret-1-long-enough-for-32-chars'))).status).toBe(200);
    expect((await get('/entities/host:strong', as('agent-secret-1-long-enough-for-32-chars'))).status).toBe(200);
  });

  it('lists with filters and says how fresh the list is', async () => {
    const provisioning = await registerEntities(
      server.runtime.commandDeps,
      [{ slug: 'lxc:fresh', type: 'lxc', parent: 'host:strong', pve_id: 141, state: 'provisioning' }],
      ctx,
    );
    expect(provisioning.entities[0]?.result).toBe('created');
    const q = async (query: string) => {
      const res = await get(`/entities?min_position=${provisioning.position}&${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.as_of_position).toBeGreaterThanOrEqual(provisioning.position);
      return res.body.entities.map((e: any) => e.slug);
    };
    expect(await q('')).toEqual(['host:strong', 'host:weak', 'lxc:fresh', 'lxc:rclone', 'vm:zimaos']);
    expect(await q('type=host')).toEqual(['host:strong', 'host:weak']);
    expect(await q('type=lxc&state=provisioning')).toEqual(['lxc:fresh']);
    expect(await q('state=active&type=')).toEqual(['host:strong', 'host:weak', 'lxc:rclone', 'vm:zimaos']);
    expect((await get('/entities?type=pool')).status).toBe(400);
    expect((await get('/entities?colour=red')).status).toBe(400);
  });

  it('reads one entity: 400 for a malformed slug, 404 for an unknown one', async () => {
    const malformed = await get('/entities/strong');
    expect(malformed.status).toBe(400);
    expect(malformed.body.detail).toMatch(/params\.slug/);
    expect((await get('/entities/pool:ludo')).status).toBe(400);
    const unknown = await get('/entities/host:nowhere');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('entity_not_found');
  });

  it('resolves where a command runs: a host itself, a guest through its host', async () => {
    const store = server.runtime.store;
    expect(await resolveTarget(store, 'host:strong')).toEqual({
      kind: 'host',
      host: { slug: 'host:strong', address: '192.168.8.10', port: 22, user: 'root', hostKey: KEY_A },
    });
    const weak = { slug: 'host:weak', address: '192.168.8.11', port: 22, user: 'admin', hostKey: null };
    expect(await resolveTarget(store, 'lxc:rclone')).toEqual({ kind: 'lxc', host: weak, pveId: 132 });
    expect(await resolveTarget(store, 'vm:zimaos')).toEqual({
      kind: 'vm',
      host: { slug: 'host:strong', address: '192.168.8.10', port: 22, user: 'root', hostKey: KEY_A },
      pveId: 200,
    });
  });

  it('refuses to resolve an unknown, a destroyed or a non-runnable entity', async () => {
    const store = server.runtime.store;
    await expect(resolveTarget(store, 'lxc:nothing')).rejects.toSatisfy((e) => e instanceof NotFound && e.code === 'unknown_entity');
    await expect(resolveTarget(store, 'pool:ludo-lvm')).rejects.toSatisfy((e) => e instanceof RuleViolation && e.rule === 'not_runnable');
    const destroyed = await setEntityState(server.runtime.commandDeps, 'lxc:fresh', 'destroyed', 'pct destroy 141 succeeded', ctx);
    expect(destroyed.events).toEqual(['EntityStateChanged']);
    await expect(resolveTarget(store, 'lxc:fresh')).rejects.toSatisfy((e) => e instanceof RuleViolation && e.rule === 'entity_destroyed');
    expect((await setEntityState(server.runtime.commandDeps, 'lxc:fresh', 'destroyed', 'again', ctx)).events).toEqual([]);
    // The destroyed guest stays in the inventory, and on its host's list of children.
    const read = await get(`/entities/host:strong?min_position=${destroyed.position}`);
    expect(read.body.entity.children).toEqual(['lxc:fresh', 'vm:zimaos']);
  });

  it('pins a host key at first connection, and refuses another one later', async () => {
    const deps = server.runtime.commandDeps;
    const first = await pinHostKey(deps, 'host:weak', KEY_B, ctx);
    expect(first.events).toEqual(['HostKeyPinned']);
    expect((await loadEntity(server.runtime.store, 'host:weak'))?.hostKey).toBe(KEY_B);
    expect((await pinHostKey(deps, 'host:weak', KEY_B, ctx)).events).toEqual([]);
    await expect(pinHostKey(deps, 'host:weak', KEY_A, ctx)).rejects.toSatisfy((e) => e instanceof RuleViolation && e.rule === 'host_key_mismatch');
    await expect(pinHostKey(deps, 'host:weak', 'not a key', ctx)).rejects.toSatisfy((e) => e instanceof RuleViolation && e.rule === 'invalid_host_key');
    await expect(pinHostKey(deps, 'host:nowhere', KEY_A, ctx)).rejects.toSatisfy((e) => e instanceof NotFound && e.code === 'unknown_entity');
    const read = await get(`/entities/host:weak?min_position=${first.position}`);
    expect(read.body.entity.ssh).toMatchObject({ host_key: KEY_B, host_key_pinned_by: 'first_connection' });
    expect((await resolveTarget(server.runtime.store, 'lxc:rclone')).host.hostKey).toBe(KEY_B);
  });

  it('refuses guests on a destroyed host', async () => {
    await post({ slug: 'host:old', type: 'host', ssh: { host: '10.2.2.2' } });
    await setEntityState(server.runtime.commandDeps, 'host:old', 'destroyed', 'decommissioned', ctx);
    const before = await head();
    const res = await post({ slug: 'vm:late', type: 'vm', parent: 'host:old', pve_id: 400 });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('parent_destroyed');
    expect(await head()).toBe(before);
  });
});
