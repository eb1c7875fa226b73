// sharedReads on a real store: the live projectors of a process asking for the same page at the same moment
// make one read, and none of them is ever handed a read that began before it asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import type { EventStore, NewEvent } from '../../src/ports/event-store.ts';
import { sharedReads } from '../../src/projections/shared-reads.ts';
import { databases, type TestDb } from '../support/databases.ts';

const ev = (type: string): NewEvent => ({ type, data: {}, metadata: {} });

describe.each(databases)('sharedReads on $name', (database) => {
  let t: TestDb;
  let store: SqlEventStore;
  /** The real store, counting the reads that reach it. */
  let counted: EventStore & { reads: number };

  beforeAll(async () => {
    t = await database.open();
    store = new SqlEventStore(t.db);
    counted = Object.assign(Object.create(store) as SqlEventStore, { reads: 0 });
    counted.readAllProjected = (options) => {
      counted.reads++;
      return store.readAllProjected(options);
    };
  });

  afterAll(async () => {
    await store.close();
    await t.close();
  });

  it('makes one read of the requests for the same page in the same turn, and hands each the same events', async () => {
    const from = (await store.head()).checkpoint;
    await store.append('shared-1', [ev('A'), ev('B')], { expectedVersion: 'no_stream' });
    const shared = sharedReads(counted);
    const before = counted.reads;
    const pages = await Promise.all([1, 2, 3].map(() => shared.readAllProjected({ after: from, limit: 10 })));
    expect(counted.reads - before).toBe(1);
    for (const page of pages) expect(page.events.map((e) => e.type)).toEqual(['A', 'B']);
    expect(pages[1]).toBe(pages[0]);
  });

  it('reads again for a different page, and for a request made once the shared read has begun', async () => {
    const from = (await store.head()).checkpoint;
    await store.append('shared-2', [ev('C')], { expectedVersion: 'no_stream' });
    const shared = sharedReads(counted);
    const before = counted.reads;
    const [first, other] = await Promise.all([shared.readAllProjected({ after: from, limit: 10 }), shared.readAllProjected({ after: from, limit: 1 })]);
    expect(counted.reads - before).toBe(2);
    expect(first.events.map((e) => e.type)).toEqual(['C']);
    expect(other.events.map((e) => e.type)).toEqual(['C']);

    // The shared read has begun (its turn came): an event appended now is for a read of the next request's own.
    const early = shared.readAllProjected({ after: from, limit: 10 });
    await new Promise((resolve) => setImmediate(resolve));
    await store.append('shared-2', [ev('D')], { expectedVersion: 0 });
    const late = shared.readAllProjected({ after: from, limit: 10 });
    const [earlyPage, latePage] = await Promise.all([early, late]);
    expect(counted.reads - before).toBe(4);
    expect(latePage.events.map((e) => e.type)).toEqual(['C', 'D']);
    expect(earlyPage.events.length).toBeGreaterThanOrEqual(1);
  });
});
