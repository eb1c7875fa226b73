// hostAddresses on real databases: the SSH address of each registered host to its slug, as the entity events
// leave it (an address changed by a re-registration, a destroyed host gone, guests never), so the retry cap can
// tell that `ssh ADDRESS …` from one host runs on another.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { type EntityEventOf, type EntityEventType, parseEntityEvent } from '../../src/domain/entity/events.ts';
import { entityStream } from '../../src/domain/entity/stream.ts';
import { entitiesProjection, hostAddresses } from '../../src/projections/entities.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { applyEvents } from './feed.ts';

let position = 0;
const versions = new Map<string, number>();

function stored<K extends EntityEventType>(slug: string, type: K, data: EntityEventOf<K>['data']): StoredEvent {
  parseEntityEvent(type, data); // a test must not feed what the store would never hold
  position += 1;
  const streamPosition = versions.get(slug) ?? 0;
  versions.set(slug, streamPosition + 1);
  const at = new Date(Date.parse('2026-07-20T09:00:00.000Z') + position * 60_000).toISOString();
  return {
    eventId: randomUUID(),
    streamName: entityStream(slug),
    streamPosition,
    position,
    checkpoint: { tx: position, pos: position },
    recordedAt: at,
    type,
    data,
    metadata: { schema_version: 1, actor: { role: 'operator', id: 'test' }, correlation_id: 'c', causation_id: 'c', occurred_at: at },
  };
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
