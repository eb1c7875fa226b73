// Stopping a led projector ends it whenever the stop lands: also while the lease is being taken, which used to
// leave the loop leading with nobody to wake it (a server's shutdown waited forever; seen once in the full suite
// as a stream test's server that never closed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Lease } from '../../src/ports/db.ts';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { LedProjector } from '../../src/projections/leadership.ts';
import { sessionsProjection } from '../../src/projections/sessions.ts';
import { databases, type TestDb } from '../support/databases.ts';

const within = <T,>(ms: number, what: string, promise: Promise<T>) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms))]);

describe.each(databases)('a led projector stopped on $name', (database) => {
  let t: TestDb;
  let store: SqlEventStore;

  beforeAll(async () => {
    t = await database.open();
    store = new SqlEventStore(t.db);
  });

  afterAll(async () => {
    await store.close();
    await t.close();
  });

  it('ends when stop() comes while the lease is being taken', async () => {
    let asked!: () => void;
    const leaseAsked = new Promise<void>((resolve) => (asked = resolve));
    let grant!: () => void;
    const granted = new Promise<void>((resolve) => (grant = resolve));
    let taken: Lease | null = null;
    // The real database, with the lease held back until the test lets it through.
    const db: Db = Object.assign(Object.create(t.db) as Db, {
      tryLease: async (name: string) => {
        asked();
        await granted;
        taken = await t.db.tryLease(name);
        return taken;
      },
    });
    const led = new LedProjector({ store, db }, sessionsProjection, { retryMs: 50 });
    led.start();
    await leaseAsked;
    const stopped = led.stop();
    grant();
    await within(5_000, 'stop()', stopped);
    expect(taken).not.toBeNull();
    expect(led.leading).toBe(false);
    // The lease went back: another can take it.
    const again = await t.db.tryLease('projection:sessions');
    expect(again).not.toBeNull();
    await again!.release();
  });

  it('ends when stop() comes while it waits to try the lease again', async () => {
    let tries = 0;
    // Another server holds the lease (PGlite grants every lease: its data directory has one process).
    const db: Db = Object.assign(Object.create(t.db) as Db, {
      tryLease: () => {
        tries++;
        return Promise.resolve(null);
      },
    });
    const led = new LedProjector({ store, db }, sessionsProjection, { retryMs: 60_000 });
    led.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(tries).toBe(1);
    expect(led.leading).toBe(false);
    // Not after the minute it would otherwise wait.
    await within(5_000, 'stop()', led.stop());
    expect(tries).toBe(1);
  });
});
