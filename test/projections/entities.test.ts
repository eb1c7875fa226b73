// The entities read model on real databases: rows as the events leave them (only changed columns move,
// times from the events), the list's filters, a host read with its guests, and the SSH address → host map.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { type EntityEventOf, type EntityEventType, parseEntityEvent } from '../../src/domain/entity/events.ts';
import { entityStream } from '../../src/domain/entity/stream.ts';
import { entitiesProjection, getEntity, getRelations, hostAddresses, listEntities } from '../../src/projections/entities.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { applyEvents, StreamFeed } from './feed.ts';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';

const feed = new StreamFeed('2026-07-20T09:00:00.000Z', { role: 'operator', id: 'test' });

/** One stored event on `slug`'s stream, one minute after the previous one. */
function stored<K extends EntityEventType>(slug: string, type: K, data: EntityEventOf<K>['data']): StoredEvent {
  parseEntityEvent(type, data); // a test must not feed what the store would never hold
  return feed.add(entityStream(slug), type, data);
}

const host = (name: string, address: string) =>
  stored(`host:${name}`, 'EntityRegistered', {
    slug: `host:${name}`,
    type: 'host',
    name,
    state: 'active',
    parent: null,
    pve_id: null,
    ssh: { host: address, port: 22, user: 'root' },
    attributes: {},
  });
const guest = (type: 'lxc' | 'vm', name: string, parent: string, pve_id: number, state: 'provisioning' | 'active' = 'active') =>
  stored(`${type}:${name}`, 'EntityRegistered', { slug: `${type}:${name}`, type, name, state, parent, pve_id, ssh: null, attributes: { os: 'debian' } });

describe.each(databases)('entities projection on $name', (database) => {
  let t: TestDb;
  let db: Db;
  const project = (...events: StoredEvent[]) => applyEvents(db, entitiesProjection, events);

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  it('holds a registered host and guest as their events say', async () => {
    const registered = host('strong', '192.168.8.10');
    await project(registered, guest('lxc', 'rclone', 'host:strong', 132));
    expect(await getEntity(db, 'host:strong')).toEqual({
      slug: 'host:strong',
      type: 'host',
      name: 'strong',
      state: 'active',
      parent: null,
      pve_id: null,
      ssh: { host: '192.168.8.10', port: 22, user: 'root', host_key: null, host_key_pinned_by: null },
      attributes: {},
      children: ['lxc:rclone'],
      retired: null,
      health: { reachable: null, last_contact_at: null, last_failure_at: null, last_error: null, checked_at: null },
      created_at: registered.recordedAt,
      updated_at: registered.recordedAt,
    });
    expect(await getEntity(db, 'lxc:rclone')).toMatchObject({ type: 'lxc', name: 'rclone', parent: 'host:strong', pve_id: 132, ssh: null, attributes: { os: 'debian' } });
    expect(await getEntity(db, 'lxc:rclone')).not.toHaveProperty('children');
    expect(await getEntity(db, 'lxc:nothing')).toBeNull();
  });

  it('moves only the changed columns, and updated_at to the event time', async () => {
    const created = host('weak', '10.0.0.2');
    await project(created);
    const updated = stored('host:weak', 'EntityUpdated', { ssh: { port: 2222 }, attributes: { rack: 'b' } });
    await project(updated);
    expect(await getEntity(db, 'host:weak')).toMatchObject({
      ssh: { host: '10.0.0.2', port: 2222, user: 'root' },
      attributes: { rack: 'b' },
      created_at: created.recordedAt,
      updated_at: updated.recordedAt,
    });
    await project(stored('host:weak', 'HostKeyPinned', { host_key: KEY, pinned_by: 'first_connection', previous_host_key: null }));
    expect((await getEntity(db, 'host:weak'))?.ssh).toEqual({ host: '10.0.0.2', port: 2222, user: 'root', host_key: KEY, host_key_pinned_by: 'first_connection' });
    await project(stored('host:weak', 'EntityStateChanged', { from: 'active', to: 'destroyed', reason: 'decommissioned' }));
    expect((await getEntity(db, 'host:weak'))?.state).toBe('destroyed');
  });

  it('lists by slug, filtered by type and state', async () => {
    await project(host('third', '10.0.0.3'), guest('vm', 'zimaos', 'host:third', 200), guest('lxc', 'fresh', 'host:third', 141, 'provisioning'));
    const slugs = async (filter: Parameters<typeof listEntities>[1]) => (await listEntities(db, filter)).map((e) => e.slug);
    expect(await slugs({})).toEqual(['host:strong', 'host:third', 'host:weak', 'lxc:fresh', 'lxc:rclone', 'vm:zimaos']);
    expect(await slugs({ type: 'host' })).toEqual(['host:strong', 'host:third', 'host:weak']);
    expect(await slugs({ state: 'destroyed' })).toEqual(['host:weak']);
    expect(await slugs({ type: 'lxc', state: 'provisioning' })).toEqual(['lxc:fresh']);
    expect((await getEntity(db, 'host:third'))?.children).toEqual(['lxc:fresh', 'vm:zimaos']);
  });

  it('merges an attributes update into the row, removing the keys set to null', async () => {
    await project(stored('lxc:rclone', 'EntityAttributesUpdated', { attributes: { kernel: '6.8.12', mounts: ['/mnt/library'] } }));
    const removed = stored('lxc:rclone', 'EntityAttributesUpdated', { attributes: { os: null, kernel: '6.8.14' } });
    await project(removed);
    expect(await getEntity(db, 'lxc:rclone')).toMatchObject({ attributes: { kernel: '6.8.14', mounts: ['/mnt/library'] }, updated_at: removed.recordedAt });
  });

  it('holds relationships both ways, with the host → guest one from each guest\'s parent', async () => {
    await project(
      stored('host:strong', 'RelationshipCreated', { to: 'vm:zimaos', type: 'exports_to' }),
      stored('lxc:rclone', 'RelationshipCreated', { to: 'host:strong', type: 'backs_up' }),
      // Recorded explicitly as well as implied by the parent: listed once.
      stored('host:third', 'RelationshipCreated', { to: 'vm:zimaos', type: 'hosts' }),
    );
    expect(await getRelations(db, 'vm:zimaos')).toEqual({
      outgoing: [],
      incoming: [
        { from: 'host:strong', type: 'exports_to' },
        { from: 'host:third', type: 'hosts' },
      ],
    });
    expect(await getRelations(db, 'host:third')).toEqual({
      outgoing: [
        { to: 'lxc:fresh', type: 'hosts' },
        { to: 'vm:zimaos', type: 'hosts' },
      ],
      incoming: [],
    });
    expect(await getRelations(db, 'lxc:rclone')).toEqual({
      outgoing: [{ to: 'host:strong', type: 'backs_up' }],
      incoming: [{ from: 'host:strong', type: 'hosts' }],
    });
    expect(await getRelations(db, 'host:strong')).toEqual({
      outgoing: [
        { to: 'vm:zimaos', type: 'exports_to' },
        { to: 'lxc:rclone', type: 'hosts' },
      ],
      incoming: [{ from: 'lxc:rclone', type: 'backs_up' }],
    });
    expect(await getRelations(db, 'lxc:nothing')).toBeNull();
  });

  it('follows a guest that moves to another host', async () => {
    await project(stored('lxc:rclone', 'EntityUpdated', { parent: 'host:third', pve_id: 150 }));
    expect(await getEntity(db, 'lxc:rclone')).toMatchObject({ parent: 'host:third', pve_id: 150 });
    expect((await getEntity(db, 'host:strong'))?.children).toEqual([]);
  });
});

describe.each(databases)('hostAddresses on $name', (database) => {
  let t: TestDb;
  let db: Db;

  beforeAll(async () => {
    t = await database.open();
    db = t.db;
  });
  afterAll(async () => {
    await t.close();
  });

  it('is empty with no hosts', async () => {
    expect(await hostAddresses(db)).toEqual(new Map());
  });

  it('maps each live host’s SSH address to its slug, following re-registrations and destruction', async () => {
    await applyEvents(db, entitiesProjection, [
      host('a', '10.0.0.6'),
      host('b', '10.0.0.7'),
      host('c', '10.0.0.8'),
      host('twin', '10.0.0.6'), // an address two hosts share names the first by slug
      stored('lxc:web', 'EntityRegistered', { slug: 'lxc:web', type: 'lxc', name: 'web', state: 'active', parent: 'host:a', pve_id: 101, ssh: null, attributes: {} }),
      stored('host:b', 'EntityUpdated', { ssh: { host: 'b.lan' } }),
      stored('host:c', 'EntityStateChanged', { from: 'active', to: 'destroyed', reason: 'decommissioned' }),
    ]);
    expect(await hostAddresses(db)).toEqual(new Map([['10.0.0.6', 'host:a'], ['b.lan', 'host:b']]));
  });
});
