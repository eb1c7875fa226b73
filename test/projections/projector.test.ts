// The checkpointed projector on a real event store and database: every handled event lands exactly once,
// whether caught up in batches, followed live, resumed after a failure, raced, reset or rebuilt.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, PREPARED_READ, type Queryable, type Transaction } from '../../src/ports/db.ts';
import { postgresDb } from '../../src/adapters/db/postgres.ts';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { type EventStore, type NewEvent, type ProjectedEvent, START, type StoredEvent } from '../../src/ports/event-store.ts';
import { eachEvent, type Projection } from '../../src/projections/projection.ts';
import {
  ensureCheckpoint,
  hasReached,
  needsRebuild,
  Projector,
  ProjectorGroup,
  type ProjectorDeps,
  projectionStatus,
  rebuildProjection,
  resetProjection,
} from '../../src/projections/projector.ts';
import { moveCheckpoint, readCheckpoint } from '../../src/projections/checkpoints.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { wholeLog } from '../support/log.ts';

const ev = (type: string, n = 0): NewEvent => ({ type, data: { n }, metadata: {} });

/** Rows keyed by event position, so an event applied twice fails the batch instead of hiding. */
interface TestProjection extends Projection {
  readonly rowsTable: string;
  /** Events to fail on, once each: the first apply of such an event throws. */
  failOnce: Set<number>;
  applied: number;
  onApply?: (event: ProjectedEvent) => Promise<void>;
}

let tables = 0;
async function testProjection(db: Queryable, version = 1, name = `p${++tables}`): Promise<TestProjection> {
  const rowsTable = `${name}_rows`;
  const counterTable = `${name}_counter`;
  await db.exec(`
    CREATE TABLE IF NOT EXISTS ${rowsTable} (position bigint PRIMARY KEY, stream text NOT NULL, type text NOT NULL);
    CREATE TABLE IF NOT EXISTS ${counterTable} (id int PRIMARY KEY, n int NOT NULL);`);
  const projection: TestProjection = {
    name,
    version,
    tables: [rowsTable, counterTable],
    handles: new Set(['A', 'B']),
    rowsTable,
    failOnce: new Set(),
    applied: 0,
    applyBatch: eachEvent(async (tx, event) => {
      projection.applied++;
      await projection.onApply?.(event);
      if (projection.failOnce.delete(event.position)) throw new Error(`planned failure at ${event.position}`);
      await tx.query(`INSERT INTO ${rowsTable} (position, stream, type) VALUES ($1, $2, $3)`, [event.position, event.streamName, event.type]);
      await tx.query(`INSERT INTO ${counterTable} (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = ${counterTable}.n + 1`);
    }),
  };
  return projection;
}

/**
 * A test projection that folds: each batch reads the counter (a read it marks readOnly, so it may be sent ahead)
 * and writes it back moved on by the batch's handled events, blind. A read answered with a stale value would
 * leave the counter wrong.
 */
async function foldingProjection(db: Queryable): Promise<TestProjection> {
  const base = await testProjection(db);
  const [rowsTable, counterTable] = base.tables as [string, string];
  const projection: TestProjection = {
    ...base,
    applyBatch: async (tx, events) => {
      projection.applied += events.length;
      const { rows } = await tx.query<{ n: number }>(`SELECT n FROM ${counterTable} WHERE id = 1`, [], PREPARED_READ);
      for (const event of events) tx.send(`INSERT INTO ${rowsTable} (position, stream, type) VALUES ($1, $2, $3)`, [event.position, event.streamName, event.type]);
      tx.send(`INSERT INTO ${counterTable} (id, n) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n`, [Number(rows[0]?.n ?? 0) + events.length]);
    },
  };
  return projection;
}

let streams = 0;
/** Appends `count` events in separate transactions, mixing handled and unhandled types; returns the last position. */
async function appendMany(store: EventStore, count: number): Promise<number> {
  const stream = `test-${++streams}`;
  let position = 0;
  for (let i = 0; i < count; i++) {
    const type = i % 3 === 2 ? 'Ignored' : i % 2 === 0 ? 'A' : 'B';
    ({ position } = await store.append(stream, [ev(type, i)], { expectedVersion: i === 0 ? 'no_stream' : i - 1 }));
  }
  return position;
}

const allEvents = (store: EventStore): Promise<StoredEvent[]> => wholeLog(store);

async function rowsOf(db: Queryable, projection: TestProjection) {
  const { rows } = await db.query<{ position: number; stream: string; type: string }>(`SELECT position, stream, type FROM ${projection.rowsTable} ORDER BY position`);
  return rows.map((r) => ({ position: Number(r.position), stream: r.stream, type: r.type }));
}

async function counterOf(db: Queryable, projection: TestProjection): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT n FROM ${projection.tables[1]!} WHERE id = 1`);
  return Number(rows[0]?.n ?? 0);
}

/** The projection holds exactly one row per handled event in the log, and its counter agrees. */
async function expectExact(deps: ProjectorDeps, projection: TestProjection): Promise<void> {
  const expected = (await allEvents(deps.store))
    .filter((e) => projection.handles.has(e.type))
    .map((e) => ({ position: e.position, stream: e.streamName, type: e.type }))
    .sort((a, b) => a.position - b.position);
  expect(await rowsOf(deps.db, projection)).toEqual(expected);
  expect(await counterOf(deps.db, projection)).toBe(expected.length);
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function caughtUp(deps: ProjectorDeps, projection: Projection): Promise<boolean> {
  const [status] = await projectionStatus(deps, [projection]);
  return status?.lag === 0;
}

/** The real store with an action slipped in after each projected read returns: lets a test move a checkpoint between a batch's read and write. */
function interposed(store: EventStore, afterRead: () => Promise<void>): EventStore {
  return {
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    readAllProjected: async (options) => {
      const result = await store.readAllProjected(options);
      await afterRead();
      return result;
    },
    subscribe: (...args) => store.subscribe(...args),
    changes: () => store.changes(),
    streamChanges: (name) => store.streamChanges(name),
    checkpointOf: (position) => store.checkpointOf(position),
    head: () => store.head(),
    close: () => store.close(),
  };
}

describe.each(databases)('projector on $name', (database) => {
  let t: TestDb;
  let store: SqlEventStore;
  let deps: ProjectorDeps;

  beforeAll(async () => {
    t = await database.open();
    store = new SqlEventStore(t.db);
    deps = { store, db: t.db };
  });

  afterAll(async () => {
    await store.close();
    await t.close();
  });

  it('catches up over several small batches to exactly one row per handled event', async () => {
    await appendMany(store, 23);
    const projection = await testProjection(t.db);
    const projector = new Projector(deps, projection, { batchSize: 4 });
    let batches = 0;
    while ((await projector.runBatch()) > 0) batches++;
    expect(batches).toBeGreaterThanOrEqual(6); // at least 23 events / 4 per batch
    await expectExact(deps, projection);
    // Unhandled events were read but not applied; the checkpoint still passed them.
    expect(projection.applied).toBe((await allEvents(store)).filter((e) => projection.handles.has(e.type)).length);
    expect(await caughtUp(deps, projection)).toBe(true);
  });

  it('follows the log live after start() and stops cleanly', async () => {
    await appendMany(store, 5);
    const projection = await testProjection(t.db);
    const errors: unknown[] = [];
    const projector = new Projector(deps, projection, { batchSize: 3, onError: (e) => errors.push(e) });
    projector.start();
    await waitFor(() => caughtUp(deps, projection), 'catch-up');
    // Appended after the projector went idle: only a change notification (or the idle recheck) brings these in.
    await appendMany(store, 7);
    // Well inside the projector's 5 s idle recheck, so this proves the notification woke it.
    await waitFor(() => caughtUp(deps, projection), 'live events', 3_000);
    await projector.stop();
    await expectExact(deps, projection);
    expect(errors).toEqual([]);
  });

  it('rolls back a failed batch and resumes from the committed checkpoint without loss or doubles', async () => {
    const last = await appendMany(store, 12);
    const projection = await testProjection(t.db);
    const handled = (await allEvents(store)).filter((e) => projection.handles.has(e.type));
    const victim = handled[handled.length - 3]!.position;
    projection.failOnce.add(victim);
    const first = new Projector(deps, projection, { batchSize: 5 });
    await expect(first.catchUp()).rejects.toThrow(`planned failure at ${victim}`);
    // Nothing of the failed batch survived: no row at or after the batch that held the victim.
    const [status] = await projectionStatus(deps, [projection]);
    expect(status!.position).toBeLessThan(victim);
    expect((await rowsOf(t.db, projection)).every((r) => r.position <= status!.position)).toBe(true);
    expect(await hasReached(deps, [projection], last)).toBe(false);

    // A fresh projector, as after a restart, picks up from the committed checkpoint.
    await new Projector(deps, projection, { batchSize: 5 }).catchUp();
    await expectExact(deps, projection);
  });

  it('reports an error from the live loop, backs off and recovers on its own', async () => {
    await appendMany(store, 6);
    const projection = await testProjection(t.db);
    const handled = (await allEvents(store)).filter((e) => projection.handles.has(e.type));
    projection.failOnce.add(handled[handled.length - 1]!.position);
    const errors: unknown[] = [];
    const projector = new Projector(deps, projection, { onError: (e) => errors.push(e) });
    projector.start();
    await waitFor(() => caughtUp(deps, projection), 'recovery after the failure');
    await projector.stop();
    expect(errors).toHaveLength(1);
    await expectExact(deps, projection);
  });

  it('discards a batch whose checkpoint a reset moved between its read and its write', async () => {
    await appendMany(store, 4);
    const projection = await testProjection(t.db);
    await new Projector(deps, projection).catchUp();
    await appendMany(store, 4);
    let resets = 0;
    const racing = interposed(store, async () => {
      if (resets++ === 0) await resetProjection(t.db, projection);
    });
    const projector = new Projector({ store: racing, db: t.db }, projection, { batchSize: 100 });
    const read = await projector.runBatch();
    expect(read).toBe(4); // it read the four new events...
    expect(await rowsOf(t.db, projection)).toEqual([]); // ...but applied none: the reset's empty tables stand
    expect(await caughtUp(deps, projection)).toBe(false);
    // Had it applied them, the replay from START would collide with its rows; instead it ends exact.
    await projector.catchUp();
    await expectExact(deps, projection);
  });

  it('moves past events it has nothing to apply for in one statement, and not from a place a reset has left', async () => {
    await appendMany(store, 4);
    const projection = await testProjection(t.db);
    await new Projector(deps, projection).catchUp();
    const stream = `ignored-${++streams}`;
    await store.append(stream, [ev('Ignored'), ev('Ignored')], { expectedVersion: 'no_stream' });
    const head = (await store.head()).checkpoint;
    // A projector moving past them alone: its checkpoint reaches the head without a transaction, no row is written.
    let transactions = 0;
    const counting: Db = { ...t.db, transaction: (fn) => (transactions++, t.db.transaction(fn)) };
    const skipping = new Projector({ store, db: counting }, projection, { batchSize: 100 });
    expect(await skipping.runBatch()).toBe(2);
    expect(transactions).toBe(0);
    expect((await readCheckpoint(t.db, projection.name))?.checkpoint).toEqual(head);
    expect(await caughtUp(deps, projection)).toBe(true);
    await expectExact(deps, projection);

    // The same, with a reset between the read and the move: the move matches nothing and the reset stands.
    await store.append(stream, [ev('Ignored')], { expectedVersion: 1 });
    let resets = 0;
    const racing = interposed(store, async () => {
      if (resets++ === 0) await resetProjection(t.db, projection);
    });
    const projector = new Projector({ store: racing, db: t.db }, projection, { batchSize: 100 });
    expect(await projector.runBatch()).toBe(1);
    expect((await readCheckpoint(t.db, projection.name))?.checkpoint).toEqual(START);
    expect(await rowsOf(t.db, projection)).toEqual([]);
    await projector.catchUp();
    await expectExact(deps, projection);
  });

  it('refuses to move a checkpoint that stands elsewhere or under another version', async () => {
    const projection = await testProjection(t.db);
    await ensureCheckpoint(t.db, projection);
    const from = { version: projection.version, checkpoint: START };
    const to = { tx: 7, pos: 11 };
    expect(await moveCheckpoint(t.db, projection.name, { version: projection.version + 1, checkpoint: START }, to)).toBe(false);
    expect(await moveCheckpoint(t.db, projection.name, { version: projection.version, checkpoint: { tx: 1, pos: 1 } }, to)).toBe(false);
    expect((await readCheckpoint(t.db, projection.name))?.checkpoint).toEqual(START);
    expect(await moveCheckpoint(t.db, projection.name, from, to)).toBe(true);
    expect((await readCheckpoint(t.db, projection.name))?.checkpoint).toEqual(to);
    expect(await moveCheckpoint(t.db, projection.name, from, { tx: 8, pos: 12 })).toBe(false);
    expect((await readCheckpoint(t.db, projection.name))?.checkpoint).toEqual(to);
  });

  it('discards a batch when another projector committed the same events first', async () => {
    await appendMany(store, 6);
    const projection = await testProjection(t.db);
    const rival = new Projector(deps, projection, { batchSize: 100 });
    let raced = false;
    const racing = interposed(store, async () => {
      if (raced) return;
      raced = true;
      expect(await rival.runBatch()).toBeGreaterThan(0);
    });
    const projector = new Projector({ store: racing, db: t.db }, projection, { batchSize: 100 });
    const appliedBefore = projection.applied;
    await projector.runBatch();
    await projector.catchUp();
    // Each handled event was applied once: ours found the checkpoint moved and did not even call apply.
    const handled = (await allEvents(store)).filter((e) => projection.handles.has(e.type)).length;
    expect(projection.applied - appliedBefore).toBe(handled);
    await expectExact(deps, projection);
  });

  it('rebuilds to identical rows and reports its progress', async () => {
    await appendMany(store, 9);
    const projection = await testProjection(t.db);
    await new Projector(deps, projection, { batchSize: 2 }).catchUp();
    const before = await rowsOf(t.db, projection);
    const progress: { events: number; position: number }[] = [];
    const { events, resumedFrom, swapped } = await rebuildProjection(deps, projection, (p) => progress.push(p));
    const head = await store.head();
    expect(events).toBe((await allEvents(store)).length);
    expect({ resumedFrom, swapped }).toEqual({ resumedFrom: null, swapped: true });
    expect(progress[0]).toEqual({ events: 0, position: 0 });
    expect(progress.at(-1)).toEqual({ events, position: head.position });
    expect(await rowsOf(t.db, projection)).toEqual(before);
    await expectExact(deps, projection);
  });

  it('reports a version change; the live rows keep following the log until a rebuild swaps in the new version', async () => {
    const projection = await testProjection(t.db, 1);
    expect(await ensureCheckpoint(t.db, projection)).toEqual({ versionChanged: false });
    expect(await ensureCheckpoint(t.db, projection)).toEqual({ versionChanged: false });
    expect(await needsRebuild(t.db, projection)).toBe(false);
    await appendMany(store, 3);
    await new Projector(deps, projection).catchUp();
    const next = await testProjection(t.db, 2, projection.name);
    expect(await ensureCheckpoint(t.db, next)).toEqual({ versionChanged: true });
    expect(await needsRebuild(t.db, next)).toBe(true);
    await appendMany(store, 3);
    await new Projector(deps, next).catchUp();
    let [status] = await projectionStatus(deps, [next]);
    expect(status).toMatchObject({ name: next.name, version: 1, state: 'live', lag: 0, rebuild: null });
    await expectExact(deps, next);
    await rebuildProjection(deps, next);
    expect(await ensureCheckpoint(t.db, next)).toEqual({ versionChanged: false });
    expect(await needsRebuild(t.db, next)).toBe(false);
    [status] = await projectionStatus(deps, [next]);
    expect(status).toMatchObject({ name: next.name, version: 2, state: 'live', lag: 0 });
    await expectExact(deps, next);
    // An older server (version 1) beside the newer one neither rebuilds the newer rows nor replaces its rebuild.
    expect(await needsRebuild(t.db, projection)).toBe(false);
    const third = await testProjection(t.db, 3, projection.name);
    await rebuildProjection(deps, third, () => {
      throw new Error('stopped after the first report');
    }).catch(() => undefined);
    expect(await needsRebuild(t.db, projection)).toBe(false);
    await expect(rebuildProjection(deps, projection)).rejects.toThrow(/newer than this code/);
    expect(await needsRebuild(t.db, third)).toBe(true);
    await rebuildProjection(deps, third);
    await expectExact(deps, third);
  });

  it('reports lag before catch-up and none after', async () => {
    await appendMany(store, 3);
    const projection = await testProjection(t.db);
    await ensureCheckpoint(t.db, projection);
    const [before] = await projectionStatus(deps, [projection]);
    const head = await store.head();
    expect(before!.lag).toBe(head.position);
    await new Projector(deps, projection).catchUp();
    const [after] = await projectionStatus(deps, [projection]);
    expect(after).toMatchObject({ lag: 0, position: head.position, checkpoint: head.checkpoint, version: 1 });
    expect(Number.isNaN(Date.parse(after!.updated_at))).toBe(false);
  });

  it('answers read-your-writes: not reached before catch-up, reached after, never beyond the log', async () => {
    const projection = await testProjection(t.db);
    const other = await testProjection(t.db);
    await new Projector(deps, other).catchUp();
    const position = await appendMany(store, 2);
    expect(await hasReached(deps, [projection, other], position)).toBe(false);
    await new Projector(deps, projection).catchUp();
    // One projection behind is enough to say no.
    expect(await hasReached(deps, [projection, other], position)).toBe(false);
    await new Projector(deps, other).catchUp();
    expect(await hasReached(deps, [projection, other], position)).toBe(true);
    expect(await hasReached(deps, [projection], position + 1000)).toBe(false);
    expect(await hasReached(deps, [projection], 0)).toBe(true);
  });

  it('lets stop() finish the batch in flight', async () => {
    await appendMany(store, 4);
    const projection = await testProjection(t.db);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inApply = new Promise<void>((resolve) => (entered = resolve));
    projection.onApply = async () => {
      entered();
      await gate;
    };
    const projector = new Projector(deps, projection);
    projector.start();
    await inApply;
    const stopped = projector.stop();
    release();
    await stopped;
    await expectExact(deps, projection);
  });

  it('two projectors on the same projection, each on its own pool, end with exactly one row per event', async () => {
    const projection = await testProjection(t.db);
    // On PostgreSQL the second projector runs as another process would: its own pool and its own LISTEN.
    const otherDb = t.url ? postgresDb(t.url, { max: 5 }) : t.db;
    const otherStore = t.url ? new SqlEventStore(otherDb) : store;
    const errors: unknown[] = [];
    const a = new Projector(deps, projection, { batchSize: 3, onError: (e) => errors.push(e) });
    const b = new Projector({ store: otherStore, db: otherDb }, projection, { batchSize: 5, onError: (e) => errors.push(e) });
    a.start();
    b.start();
    try {
      // Writers on both connections, concurrently with both projectors.
      await Promise.all([appendMany(store, 30), appendMany(otherStore, 30), appendMany(store, 30)]);
      await waitFor(() => caughtUp(deps, projection), 'both projectors to finish');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      if (t.url) {
        await otherStore.close();
        await otherDb.close();
      }
    }
    expect(errors).toEqual([]);
    await expectExact(deps, projection);
  });

  it.runIf(database.name === 'postgres')('waits out an open appending transaction that holds back later events, then projects them (PostgreSQL only: on PGlite one connection serialises transactions)', async () => {
    const projection = await testProjection(t.db);
    await new Projector(deps, projection).catchUp();
    // An append in flight (it holds the lock on events and has an xid) keeps later appends below the read bound.
    const holder = new pg.Client({ connectionString: t.url! });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE events IN ROW EXCLUSIVE MODE');
      await holder.query('SELECT pg_current_xact_id()');
      const position = await appendMany(store, 1);
      // The idle recheck is pushed out of reach: only the pending back-off (2–50 ms) can bring the event in in time.
      const projector = new Projector(deps, projection, { idleRecheckMs: 120_000 });
      projector.start();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await hasReached(deps, [projection], position)).toBe(false);
      await holder.query('COMMIT');
      // No append follows the commit, so no notification: the pending backoff alone must bring the event in.
      // (A commit between the store's read and its pending check once told the loop "nothing pending" and it went
      // idle; the store's own test pins that interleaving now.) Far below the recheck.
      await waitFor(() => hasReached(deps, [projection], position), 'the held-back event', 10_000);
      await projector.stop();
    } finally {
      await holder.end();
    }
    await expectExact(deps, projection);
  });

  it.runIf(database.name === 'postgres')('is not held back by an open transaction that does not append events (PostgreSQL only: on PGlite one connection serialises transactions)', async () => {
    const projection = await testProjection(t.db);
    await new Projector(deps, projection).catchUp();
    // A writer elsewhere (here: on another table of the same database) has an xid but can never add events.
    const other = new pg.Client({ connectionString: t.url! });
    await other.connect();
    try {
      await other.query('CREATE TABLE IF NOT EXISTS unrelated (n int)');
      await other.query('BEGIN');
      await other.query('INSERT INTO unrelated VALUES (1)');
      const position = await appendMany(store, 2);
      const projector = new Projector(deps, projection);
      projector.start();
      await waitFor(() => hasReached(deps, [projection], position), 'events appended while an unrelated transaction is open', 3_000);
      await projector.stop();
      await other.query('ROLLBACK');
    } finally {
      await other.end();
    }
    await expectExact(deps, projection);
  });

  // The projector group: the live projectors of a process as one loop.

  /** Two test projections caught up with the log as it stands. */
  async function twoCaughtUp(): Promise<[TestProjection, TestProjection]> {
    const a = await testProjection(t.db);
    const b = await testProjection(t.db);
    await new Projector(deps, a).catchUp();
    await new Projector(deps, b).catchUp();
    return [a, b];
  }

  const appendBurst = (types: string[]) => store.append(`burst-${++streams}`, types.map((type, i) => ev(type, i)), { expectedVersion: 'no_stream' });

  it('applies a batch of several events to every member in one transaction, each event exactly once', async () => {
    const [a, b] = await twoCaughtUp();
    let transactions = 0;
    const counting: Db = { ...t.db, transaction: (fn, options) => (transactions++, t.db.transaction(fn, options)) };
    const group = new ProjectorGroup({ store, db: counting }, { idleRecheckMs: 100 });
    await appendBurst(['A', 'B', 'A', 'Ignored']);
    group.join(a);
    group.join(b);
    try {
      await waitFor(async () => (await caughtUp(deps, a)) && (await caughtUp(deps, b)), 'both members caught up');
      expect(transactions).toBe(1);
      await expectExact(deps, a);
      await expectExact(deps, b);
    } finally {
      await group.stop();
    }
  });

  it('keeps the other members going while one fails, and applies the failing one once it recovers', async () => {
    const [a, b] = await twoCaughtUp();
    let broken = true;
    a.onApply = () => (broken ? Promise.reject(new Error(`${a.name} is broken`)) : Promise.resolve());
    const errors: unknown[] = [];
    const groupErrors: unknown[] = [];
    const group = new ProjectorGroup(deps, { idleRecheckMs: 100, onError: (e) => groupErrors.push(e) });
    group.join(a, { onError: (e) => errors.push(e) });
    group.join(b);
    try {
      await appendBurst(['A', 'B', 'A']);
      await waitFor(() => caughtUp(deps, b), 'the healthy member caught up');
      await expectExact(deps, b);
      await waitFor(() => Promise.resolve(errors.length > 0), "the failing member's error reported to it");
      expect(String(errors[0])).toContain(`${a.name} is broken`);
      expect(await caughtUp(deps, a)).toBe(false);
      expect(groupErrors).toEqual([]);
      broken = false;
      await waitFor(() => caughtUp(deps, a), 'the recovered member caught up');
      await expectExact(deps, a);
    } finally {
      await group.stop();
    }
  });

  it('stops applying to a member that left, after its batch in flight, while the others go on', async () => {
    const [a, b] = await twoCaughtUp();
    const group = new ProjectorGroup(deps, { idleRecheckMs: 100 });
    group.join(a);
    group.join(b);
    try {
      await appendBurst(['A', 'B']);
      await waitFor(async () => (await caughtUp(deps, a)) && (await caughtUp(deps, b)), 'both members caught up');
      await group.leave(a.name);
      expect(group.names).toEqual([b.name]);
      const before = await rowsOf(t.db, a);
      await appendBurst(['A', 'B', 'A']);
      await waitFor(() => caughtUp(deps, b), 'the remaining member caught up');
      await expectExact(deps, b);
      expect(await rowsOf(t.db, a)).toEqual(before);
      expect(await caughtUp(deps, a)).toBe(false);
    } finally {
      await group.stop();
    }
  });

  it('leaves out a member another writer moved between the read and the write, and applies it afresh', async () => {
    const [a, b] = await twoCaughtUp();
    let resets = 0;
    // The first batch after the burst is read, then a reset of `a` commits before the group's transaction.
    const racing = interposed(store, async () => {
      if (resets++ === 0) await resetProjection(t.db, a);
    });
    const group = new ProjectorGroup({ store: racing, db: t.db }, { idleRecheckMs: 100 });
    await appendBurst(['A', 'B', 'A']);
    group.join(a);
    group.join(b);
    try {
      await waitFor(async () => (await caughtUp(deps, a)) && (await caughtUp(deps, b)), 'both members caught up after the reset');
      expect(resets).toBeGreaterThan(1);
      await expectExact(deps, a);
      await expectExact(deps, b);
    } finally {
      await group.stop();
    }
  });

  /** The group's view of the store and the database, counting the reads of the log and of the fold's counter. */
  function counted(folding: TestProjection) {
    const counts = { logReadsAlone: 0, logReadsInTransaction: 0, transactions: 0, counterReads: 0, counterReadsAhead: 0 };
    let readingLog = false;
    const log = store.logIn(t.db)!;
    const countedStore: EventStore = {
      ...interposed(store, () => Promise.resolve()),
      readAllProjected: (options) => (counts.logReadsAlone++, store.readAllProjected(options)),
      logIn: () => ({
        readAllProjectedOn: (on, options) => {
          counts.logReadsInTransaction++;
          readingLog = true;
          return log.readAllProjectedOn(on, options).finally(() => (readingLog = false));
        },
        appendedAfter: (after) => log.appendedAfter(after),
      }),
    };
    const countingTx = (tx: Transaction): Transaction => ({
      ...tx,
      query: (sql, params, options) => {
        if (sql.includes(folding.tables[1]!) && sql.startsWith('SELECT')) {
          counts.counterReads++;
          // Sent before the page of the log is in: ahead of knowing the batch.
          if (readingLog) counts.counterReadsAhead++;
        }
        return tx.query(sql, params, options);
      },
    });
    const countedDb: Db = { ...t.db, transaction: (fn, options) => (counts.transactions++, t.db.transaction((tx, opened) => fn(countingTx(tx), opened), options)) };
    return { counts, deps: { store: countedStore, db: countedDb } };
  }

  it('reads a live batch inside the transaction that applies it, with the reads its events call for sent ahead', async () => {
    const folding = await foldingProjection(t.db);
    const other = await testProjection(t.db);
    await new Projector(deps, folding).catchUp();
    await new Projector(deps, other).catchUp();
    const { counts, deps: countedDeps } = counted(folding);
    // Woken only by this store's appends: a look of its own (the idle recheck) could start between an append's
    // commit and the store's memory of it, and read that event without a guess (seen once in CI).
    const group = new ProjectorGroup(countedDeps, { idleRecheckMs: 60_000 });
    group.join(folding);
    group.join(other);
    try {
      // Following the head: the first look reads the log alone (it may be catching up), those after in the transaction.
      for (let warm = 0; counts.logReadsInTransaction === 0; warm++) {
        if (warm === 5) throw new Error('the group never read the log inside a transaction');
        const { position } = await store.append(`lone-${++streams}`, [ev('A', -1)], { expectedVersion: 'no_stream' });
        await waitFor(() => hasReached(deps, [folding, other], position), 'a warm-up append applied');
      }
      const before = { ...counts };
      for (let i = 0; i < 5; i++) {
        const { position } = await store.append(`lone-${++streams}`, [ev(i % 2 === 0 ? 'A' : 'B', i)], { expectedVersion: 'no_stream' });
        await waitFor(() => hasReached(deps, [folding, other], position), `append ${i} applied`);
      }
      // Each append: one transaction that read the log and applied it, with the counter read once, sent ahead.
      expect(counts.logReadsAlone).toBe(before.logReadsAlone);
      const batches = counts.transactions - before.transactions;
      expect(batches).toBeGreaterThanOrEqual(5);
      expect(counts.logReadsInTransaction - before.logReadsInTransaction).toBe(batches);
      expect(counts.counterReads - before.counterReads).toBe(5);
      expect(counts.counterReadsAhead - before.counterReadsAhead).toBe(5);
      await expectExact(deps, folding);
      await expectExact(deps, other);
    } finally {
      await group.stop();
    }
  });

  it('applies exactly what the log holds when another process appends meanwhile and its guess is wrong', async () => {
    const folding = await foldingProjection(t.db);
    await new Projector(deps, folding).catchUp();
    const elsewhere = new SqlEventStore(t.db);
    const group = new ProjectorGroup(deps, { idleRecheckMs: 100 });
    group.join(folding);
    try {
      for (let i = 0; i < 10; i++) {
        // This process's appends and another store's, at once: the guess holds only this process's.
        await Promise.all([
          store.append(`here-${++streams}`, [ev('A', i), ev('B', i)], { expectedVersion: 'no_stream' }),
          elsewhere.append(`there-${++streams}`, [ev('B', i)], { expectedVersion: 'no_stream' }),
        ]);
      }
      const { position } = await store.append(`here-${++streams}`, [ev('A', 99)], { expectedVersion: 'no_stream' });
      await waitFor(() => hasReached(deps, [folding], position), 'every append applied');
      await expectExact(deps, folding);
    } finally {
      await group.stop();
      await elsewhere.close();
    }
  });

  it('reads afresh a member reset while the group followed the head, inside the transaction that reads the log', async () => {
    const [a, b] = await twoCaughtUp();
    const { counts, deps: countedDeps } = counted(a);
    const group = new ProjectorGroup(countedDeps, { idleRecheckMs: 60_000 });
    group.join(a);
    group.join(b);
    try {
      for (let i = 0; i < 3; i++) {
        const { position } = await store.append(`before-reset-${++streams}`, [ev('A', i)], { expectedVersion: 'no_stream' });
        await waitFor(() => hasReached(deps, [a, b], position), `append ${i} applied`);
      }
      expect(counts.logReadsInTransaction).toBeGreaterThan(0);
      // Another process resets `a` while the group idles: what the group knows of it is stale.
      await resetProjection(t.db, a);
      const { position } = await store.append(`after-reset-${++streams}`, [ev('A', 1)], { expectedVersion: 'no_stream' });
      await waitFor(() => hasReached(deps, [a, b], position), 'both members past the reset');
      await expectExact(deps, a);
      await expectExact(deps, b);
    } finally {
      await group.stop();
    }
  });
});
