// Group commit in SqlEventStore: appends that arrive while a statement is in flight go together as the next
// one. Each keeps its own expected-version check (one that does not match fails alone, with the stream's
// version), each new, existing and any-version claim lands where appending alone would put it, two appends to
// one stream never share a statement, and readers see every event once, in order.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { ConcurrencyError, START, type NewEvent } from '../../src/ports/event-store.ts';
import { databases, type TestDb } from '../support/databases.ts';

const event = (type: string, n: number): NewEvent => ({ type, data: { n }, metadata: { actor: { role: 'operator', id: 'test' } } });
const stream = (label: string) => `group-${label}-${randomUUID()}`;

describe.each(databases)('group commit on $name', (database) => {
  let testDb: TestDb;
  let store: SqlEventStore;
  /** Statements that carried several appends. */
  let groups = 0;
  beforeAll(async () => {
    testDb = await database.open();
    const db = testDb.db;
    store = new SqlEventStore({
      ...db,
      query: (sql, params, options) => {
        if (options?.name === 'nomos_append_group') groups++;
        return db.query(sql, params, options);
      },
    });
  });
  afterAll(async () => {
    await store?.close();
    await testDb?.close();
  });

  it('appends many at once, each checked on its own: a stale expected version fails alone', async () => {
    const existing = stream('existing');
    const empty = stream('any');
    const stale = stream('stale');
    await store.append(existing, [event('First', 0), event('Second', 1)], { expectedVersion: 'no_stream' });
    await store.append(empty, [event('First', 0)], { expectedVersion: 'no_stream' });
    await store.append(stale, [event('First', 0)], { expectedVersion: 'no_stream' });
    const fresh = Array.from({ length: 20 }, (_, i) => stream(`new-${i}`));
    // All in the same turn: the first goes alone, the rest queue behind it and go together.
    const results = await Promise.allSettled([
      ...fresh.map((name, i) => store.append(name, [event('Opened', i), event('Noted', i)], { expectedVersion: 'no_stream' })),
      store.append(existing, [event('Third', 2)], { expectedVersion: 1 }),
      store.append(empty, [event('Again', 1)], { expectedVersion: 'any' }),
      store.append(stale, [event('Late', 1)], { expectedVersion: 5 }),
      store.append(fresh[0]!, [event('Twice', 9)], { expectedVersion: 1 }),
    ]);
    expect(groups).toBeGreaterThan(0);
    const rejected = results.flatMap((r, i) => (r.status === 'rejected' ? [{ i, reason: r.reason as unknown }] : []));
    expect(rejected.map((r) => r.i)).toEqual([fresh.length + 2]);
    expect(rejected[0]!.reason).toBeInstanceOf(ConcurrencyError);
    expect(rejected[0]!.reason).toMatchObject({ expected: 5, actual: 0 });
    const value = (i: number) => (results[i] as PromiseFulfilledResult<Awaited<ReturnType<SqlEventStore['append']>>>).value;
    expect(value(fresh.length).nextExpectedVersion).toBe(2);
    expect(value(fresh.length + 1).nextExpectedVersion).toBe(1);
    // The second append to fresh[0] went after the first (never in the same statement), on top of it.
    expect(value(fresh.length + 3).nextExpectedVersion).toBe(2);
    for (const [i, name] of fresh.entries()) {
      const read = await store.readStream(name);
      expect(read.events.map((e) => [e.type, e.streamPosition]), name).toEqual(i === 0 ? [['Opened', 0], ['Noted', 1], ['Twice', 2]] : [['Opened', 0], ['Noted', 1]]);
      expect(value(i).position).toBe(read.events[1]!.position);
      expect(value(i).checkpoint).toEqual(read.events[1]!.checkpoint);
    }
    expect((await store.readStream(existing)).events.map((e) => e.type)).toEqual(['First', 'Second', 'Third']);
    expect((await store.readStream(stale)).events.map((e) => e.type)).toEqual(['First']);
  });

  it('lets a reader of the log see every event once, in order, while many writers append', async () => {
    const names = Array.from({ length: 32 }, (_, i) => stream(`w${i}`));
    await Promise.all(
      names.map(async (name) => {
        let version = -1;
        for (let n = 0; n < 10; n++) {
          const result = await store.append(name, [event('Posted', n)], { expectedVersion: version === -1 ? 'no_stream' : version });
          version = result.nextExpectedVersion;
        }
      }),
    );
    const mine = new Set(names);
    const seen: Array<{ stream: string; n: number; position: number }> = [];
    let after = START;
    for (;;) {
      const page = await store.readAll({ after, limit: 500 });
      for (const e of page.events) if (mine.has(e.streamName)) seen.push({ stream: e.streamName, n: (e.data as { n: number }).n, position: e.position });
      if (page.events.length === 0) break;
      after = page.events.at(-1)!.checkpoint;
    }
    expect(seen).toHaveLength(320);
    expect(new Set(seen.map((s) => s.position)).size).toBe(320);
    for (const name of names) expect(seen.filter((s) => s.stream === name).map((s) => s.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
