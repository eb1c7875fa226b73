// Entity attributes and relationships through the command layer the agent's tools and the API call, on a
// real runtime: attributes merge (null removes a key), relationships are recorded once, both ends must be
// in the inventory (nothing is appended otherwise), and get_relations includes the host of a guest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelationship, registerEntities, updateEntityAttributes } from '../../src/commands/entity.ts';
import { entityStream } from '../../src/domain/entity/stream.ts';
import { NotFound, RuleViolation } from '../../src/domain/messages.ts';
import { getEntity, getRelations } from '../../src/projections/entities.ts';
import { hasReached } from '../../src/projections/projector.ts';
import { databases } from '../support/databases.ts';
import { type TestServer, startTestServer } from '../support/server.ts';

describe.each(databases)('entity attributes and relationships on $name', (database) => {
  let server: TestServer;
  const ctx = { actor: { role: 'agent' as const, id: 'nomos' } };
  const deps = () => server.runtime.commandDeps;
  const head = async () => (await server.runtime.store.head()).position;
  const streamOf = async (slug: string) => (await server.runtime.store.readStream(entityStream(slug))).events;
  /** Waits until the read models have processed `position`. */
  const reached = async (position: number) => {
    const { store, db, projections } = server.runtime;
    const deadline = Date.now() + 5_000;
    while (!(await hasReached({ store, db }, projections, position))) {
      if (Date.now() > deadline) throw new Error(`read models did not reach ${position}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  beforeAll(async () => {
    server = await startTestServer(database);
    const registered = await registerEntities(
      deps(),
      [
        { slug: 'host:strong', type: 'host', ssh: { host: '192.168.8.10' }, attributes: { rack: 'a', os: 'pve 8' } },
        { slug: 'host:hubris', type: 'host', ssh: { host: '192.168.8.12' } },
        { slug: 'lxc:nfs-export', type: 'lxc', parent: 'host:strong', pve_id: 120 },
        { slug: 'vm:zimaos', type: 'vm', parent: 'host:strong', pve_id: 200 },
      ],
      { actor: { role: 'operator', id: 'alice' } },
    );
    await reached(registered.position);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('merges attributes: keys set, a null value removes a key, the rest stays', async () => {
    const reply = await updateEntityAttributes(deps(), 'host:strong', { kernel: '6.8.12-4-pve', os: null, zfs: { arc_max: '16G' } }, ctx);
    expect(reply).toEqual({ slug: 'host:strong', position: expect.any(Number), events: ['EntityAttributesUpdated'] });
    expect((await streamOf('host:strong')).at(-1)).toMatchObject({
      data: { attributes: { kernel: '6.8.12-4-pve', os: null, zfs: { arc_max: '16G' } } },
      metadata: { actor: { role: 'agent', id: 'nomos' } },
    });
    await reached(reply.position);
    expect((await getEntity(server.runtime.db, 'host:strong'))?.attributes).toEqual({ rack: 'a', kernel: '6.8.12-4-pve', zfs: { arc_max: '16G' } });
  });

  it('appends nothing when every attribute already holds its value', async () => {
    const before = await head();
    const reply = await updateEntityAttributes(deps(), 'host:strong', { rack: 'a', os: null, zfs: { arc_max: '16G' } }, ctx);
    expect(reply).toEqual({ slug: 'host:strong', position: -1, events: [] });
    expect(await head()).toBe(before);
  });

  it('refuses attributes for an entity not in the inventory, and malformed attributes, appending nothing', async () => {
    const before = await head();
    await expect(updateEntityAttributes(deps(), 'lxc:ghost', { a: 1 }, ctx)).rejects.toSatisfy((e) => e instanceof NotFound && e.code === 'unknown_entity');
    await expect(updateEntityAttributes(deps(), 'pool:ludo-lvm', { a: 1 }, ctx)).rejects.toSatisfy((e) => e instanceof NotFound && e.code === 'unknown_entity');
    await expect(updateEntityAttributes(deps(), 'host:strong', { '': 1 }, ctx)).rejects.toSatisfy((e) => e instanceof RuleViolation && e.rule === 'invalid_attributes');
    expect(await head()).toBe(before);
    expect(await streamOf('lxc:ghost')).toEqual([]);
  });

  it('records a relationship once, however its type is spelt', async () => {
    const first = await createRelationship(deps(), { from: 'lxc:nfs-export', to: 'vm:zimaos', type: 'exports_to' }, ctx);
    expect(first).toEqual({ slug: 'lxc:nfs-export', position: expect.any(Number), events: ['RelationshipCreated'] });
    expect((await streamOf('lxc:nfs-export')).at(-1)?.data).toEqual({ to: 'vm:zimaos', type: 'exports_to' });
    const before = await head();
    expect(await createRelationship(deps(), { from: 'lxc:nfs-export', to: 'vm:zimaos', type: 'exports_to' }, ctx)).toEqual({ slug: 'lxc:nfs-export', position: -1, events: [] });
    expect((await createRelationship(deps(), { from: 'lxc:nfs-export', to: 'vm:zimaos', type: 'Exports-To' }, ctx)).events).toEqual([]);
    expect(await head()).toBe(before);
  });

  it('refuses a relationship with an end outside the inventory, and appends nothing', async () => {
    const before = await head();
    const unknown = (e: unknown) => e instanceof NotFound && e.code === 'unknown_entity';
    await expect(createRelationship(deps(), { from: 'vm:zimaos', to: 'lxc:ghost', type: 'mounts' }, ctx)).rejects.toSatisfy(unknown);
    await expect(createRelationship(deps(), { from: 'lxc:ghost', to: 'vm:zimaos', type: 'mounts' }, ctx)).rejects.toSatisfy(unknown);
    await expect(createRelationship(deps(), { from: 'vm:zimaos', to: 'pool:ludo-lvm', type: 'mounts' }, ctx)).rejects.toSatisfy(unknown);
    await expect(createRelationship(deps(), { from: 'vm:zimaos', to: 'host:hubris', type: 'mounts over nfs!' }, ctx)).rejects.toSatisfy(
      (e) => e instanceof RuleViolation && e.rule === 'invalid_relationship' && /^type:/.test(e.message),
    );
    await expect(createRelationship(deps(), { from: 'vm:zimaos', to: 'vm:zimaos', type: 'mounts' }, ctx)).rejects.toSatisfy(
      (e) => e instanceof RuleViolation && e.rule === 'self_relationship',
    );
    expect(await head()).toBe(before);
    expect(await streamOf('lxc:ghost')).toEqual([]);
  });

  it('lists relations both ways, the host of a guest and the guests of a host included', async () => {
    const reply = await createRelationship(deps(), { from: 'host:hubris', to: 'vm:zimaos', type: 'depends_on' }, ctx);
    await reached(reply.position);
    const db = server.runtime.db;
    expect(await getRelations(db, 'vm:zimaos')).toEqual({
      outgoing: [],
      incoming: [
        { from: 'host:hubris', type: 'depends_on' },
        { from: 'lxc:nfs-export', type: 'exports_to' },
        { from: 'host:strong', type: 'hosts' },
      ],
    });
    expect(await getRelations(db, 'host:strong')).toEqual({
      outgoing: [
        { to: 'lxc:nfs-export', type: 'hosts' },
        { to: 'vm:zimaos', type: 'hosts' },
      ],
      incoming: [],
    });
    expect(await getRelations(db, 'lxc:nfs-export')).toEqual({ outgoing: [{ to: 'vm:zimaos', type: 'exports_to' }], incoming: [{ from: 'host:strong', type: 'hosts' }] });
    expect(await getRelations(db, 'host:nowhere')).toBeNull();
  });
});
