// The entities projection applies the sessions' execution events between two inventory events as one run
// (src/projections/entities.ts): its rows must come out exactly as when the same events arrive one per transaction.
// On a generated log with the inventory registered, moved and retired part-way through it, and executions that fail
// to connect after they started (refused as unreachable), end and are asked again under the same id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { type EntityEventOf, type EntityEventType, parseEntityEvent } from '../../src/domain/entity/events.ts';
import { entityStream } from '../../src/domain/entity/stream.ts';
import { loadConfig } from '../../src/config.ts';
import { entitiesProjection } from '../../src/projections/entities.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import { appendSessions } from '../../bench/append.ts';
import { sessions } from '../../bench/generator.ts';
import { Rng } from '../../bench/prng.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { wholeLog } from '../support/log.ts';
import { projectInBatches, StreamFeed } from './feed.ts';

const DAY = 86_400_000;
const START = Date.parse('2026-11-01T00:00:00Z');

describe.each(databases)('entities in runs of executions on $name', (database) => {
  let testDb: TestDb;
  let runtime: Runtime;
  let log: StoredEvent[] = [];

  beforeAll(async () => {
    testDb = await database.open();
    runtime = await openRuntime(loadConfig({}), { db: testDb.db });
    await appendSessions(runtime.store, sessions(new Rng(20261207), { from: START, to: START + 2 * DAY, count: 60 }), { writers: 1, untilEvents: 2_500, perCommand: false });
    const generated = await wholeLog(runtime.store);
    const feed = new StreamFeed('2026-10-31T00:00:00.000Z', { role: 'operator', id: 'test' });
    const entity = <K extends EntityEventType>(slug: string, type: K, data: EntityEventOf<K>['data']): StoredEvent => {
      parseEntityEvent(type, data);
      return feed.add(entityStream(slug), type, data);
    };
    const host = (name: string) => entity(`host:${name}`, 'EntityRegistered', { slug: `host:${name}`, type: 'host', name, state: 'active', parent: null, pve_id: null, ssh: { host: `${name}.lan`, port: 22, user: 'root' }, attributes: {} });
    const guest = (slug: string, parent: string | null, pve_id: number) =>
      entity(slug, 'EntityRegistered', { slug, type: slug.startsWith('vm:') ? 'vm' : 'lxc', name: slug.split(':')[1]!, state: 'active', parent, pve_id, ssh: null, attributes: {} });
    // Executions of our own on a session's stream, from the log's first request as their template.
    const template = generated.find((e) => e.type === 'ExecutionRequested')!;
    const like = (type: string) => generated.find((e) => e.type === type)!.data;
    let n = 0;
    const execution = (type: string, data: Record<string, unknown>, at: string): StoredEvent => ({
      eventId: `synthetic-${++n}`,
      streamName: template.streamName,
      streamPosition: 10_000 + n,
      position: template.position,
      checkpoint: template.checkpoint,
      recordedAt: at,
      type,
      data: { ...like(type), ...data },
      metadata: { ...template.metadata, occurred_at: at },
    });
    const refusedAfterStart = (id: string, target: string, at: string) => [
      execution('ExecutionRequested', { execution_id: id, target }, at),
      execution('ExecutionStarted', { execution_id: id }, at),
      execution('ExecutionRefused', { execution_id: id, reason: 'unreachable', detail: `no route to ${target}` }, at),
    ];
    const third = Math.floor(generated.length / 3);
    log = [
      host('strong'),
      guest('lxc:pihole', 'host:strong', 110),
      guest('vm:zimaos', null, 200), // no host to run through
      ...generated.slice(0, third),
      host('weak'),
      guest('lxc:rclone', 'host:strong', 120),
      guest('lxc:jellyfin', 'host:weak', 130),
      ...refusedAfterStart('synthetic-a', 'lxc:rclone', '2026-11-01T06:00:00.000Z'),
      // Requested and refused before it started: not a failure to connect.
      execution('ExecutionRequested', { execution_id: 'synthetic-b', target: 'host:weak' }, '2026-11-01T06:00:01.000Z'),
      execution('ExecutionRefused', { execution_id: 'synthetic-b', reason: 'unreachable', detail: 'not started' }, '2026-11-01T06:00:01.000Z'),
      // Ended, then asked again under the same id, then left in flight.
      execution('ExecutionRequested', { execution_id: 'synthetic-c', target: 'host:strong' }, '2026-11-01T06:00:02.000Z'),
      execution('ExecutionStarted', { execution_id: 'synthetic-c' }, '2026-11-01T06:00:02.000Z'),
      execution('ExecutionSucceeded', { execution_id: 'synthetic-c' }, '2026-11-01T06:00:02.500Z'),
      execution('ExecutionRequested', { execution_id: 'synthetic-c', target: 'lxc:jellyfin' }, '2026-11-01T06:00:03.000Z'),
      execution('ExecutionStarted', { execution_id: 'synthetic-c' }, '2026-11-01T06:00:03.000Z'),
      ...generated.slice(third, 2 * third),
      entity('lxc:rclone', 'EntityUpdated', { parent: 'host:weak', pve_id: 121 }),
      ...refusedAfterStart('synthetic-d', 'lxc:rclone', '2026-11-01T12:00:00.000001Z'),
      // An older failure after a newer one on the same host: the newer stays.
      ...refusedAfterStart('synthetic-e', 'host:weak', '2026-11-01T11:00:00Z'),
      entity('host:weak', 'EntityRetired', { reason: 'replaced' }),
      ...generated.slice(2 * third),
    ];
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  it('gives the rows one event per transaction gives, in batches of 3, 7, 250 and the whole log', async () => {
    const oneByOne = await projectInBatches(runtime.db, entitiesProjection, log, 1);
    const hosts = oneByOne.entities!.map((r) => (r as { row: Record<string, unknown> }).row).filter((r) => r.type === 'host');
    // The log reached every path: contacts, a failure after a start, an execution still in flight.
    expect(hosts.every((h) => h.last_contact_at !== null)).toBe(true);
    expect(hosts.find((h) => h.slug === 'host:weak')).toMatchObject({ last_error: 'no route to lxc:rclone' });
    expect(oneByOne.entity_execution_hosts).toContainEqual({ row: { execution_id: 'synthetic-c', host: 'host:weak', started: true } });
    for (const size of [3, 7, 250, log.length]) expect(await projectInBatches(runtime.db, entitiesProjection, log, size), `batches of ${size}`).toEqual(oneByOne);
  }, 120_000);
});
