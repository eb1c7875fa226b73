// The live projectors' row cache (src/projections/row-cache.ts): the rows a batch loaded and wrote are kept for
// the next batch while the projection's checkpoint stays where this process left it. Checked alone, then on the
// real projections in a ProjectorGroup on both databases: a command's events do not read again the session row
// the previous command's wrote, the rows come out exactly as a projector without a cache makes them from the
// same log, and a member another writer moved (a reset) is read afresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSession, executeSessionCommand } from '../../src/commands/session.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db, Transaction } from '../../src/ports/db.ts';
import type { ProjectedEvent } from '../../src/ports/event-store.ts';
import { resetProjection } from '../../src/projections/checkpoints.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { hasReached, Projector, ProjectorGroup } from '../../src/projections/projector.ts';
import { RowSet } from '../../src/projections/batch.ts';
import { readsFor } from '../../src/projections/read-ahead.ts';
import { RowCache, withRowCache } from '../../src/projections/row-cache.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import { appendSessions } from '../../bench/append.ts';
import { sessions as generatedSessions } from '../../bench/generator.ts';
import { Rng } from '../../bench/prng.ts';
import { databases, type TestDb } from '../support/databases.ts';

describe('RowCache', () => {
  it('answers a view of the place it is of, and of no other (which empties it)', () => {
    const cache = new RowCache();
    const first = cache.view('1:10:5');
    first.note('t', 'a', JSON.stringify({ id: 'a', n: 1 }));
    first.note('t', 'b', null);
    cache.committed('1:10:5', '1:11:6', first);
    const next = cache.view('1:11:6');
    expect(next.get('t', 'a')).toEqual({ id: 'a', n: 1 });
    expect(next.get('t', 'b')).toBeNull();
    expect(next.get('t', 'c')).toBeUndefined();
    // Each get is a fresh object: a batch that changes it changes nothing kept.
    (next.get('t', 'a') as { n: number }).n = 99;
    expect(next.get('t', 'a')).toEqual({ id: 'a', n: 1 });
    // Another place (another writer moved the checkpoint): nothing, and nothing after either.
    expect(cache.view('1:12:9').get('t', 'a')).toBeUndefined();
    expect(cache.view('1:11:6').get('t', 'a')).toBeUndefined();
  });

  it('keeps its rows when a batch only moved the checkpoint from its place, and drops them when it moved from another', () => {
    const cache = new RowCache();
    const view = cache.view('1:1:1');
    view.note('t', 'a', '{"id":"a"}');
    cache.committed('1:1:1', '1:2:2', view);
    cache.committed('1:2:2', '1:3:3', null);
    expect(cache.view('1:3:3').get('t', 'a')).toEqual({ id: 'a' });
    cache.committed('1:9:9', '1:10:10', null);
    expect(cache.view('1:10:10').get('t', 'a')).toBeUndefined();
  });

  it('keeps at most its limit of rows a table, the least recently written going first', () => {
    const cache = new RowCache(2);
    const view = cache.view('p0');
    for (const key of ['a', 'b', 'c']) view.note('t', key, `"${key}"`);
    cache.committed('p0', 'p1', view);
    const again = cache.view('p1');
    again.note('t', 'b', '"b2"');
    cache.committed('p1', 'p2', again);
    const now = cache.view('p2');
    expect(['a', 'b', 'c'].map((key) => now.get('t', key))).toEqual([undefined, 'b2', 'c']);
  });
});

describe("read-ahead's dry run with a row cache", () => {
  /** A projection of one RowSet: it loads the event's row, counts its folds, and puts the row back. */
  function oneTable() {
    const counts = { folds: 0 };
    const projection: Projection = {
      name: 'cached',
      version: 1,
      tables: ['t'],
      handles: new Set(['E']),
      async applyBatch(tx, events) {
        const rows = new RowSet<{ id: string }>({ table: 't', key: ['id'], columns: ['id'] });
        await rows.load(tx, events.map((e) => ({ id: e.streamName })));
        counts.folds++;
        for (const e of events) rows.put({ id: e.streamName });
        rows.flush(tx);
      },
    };
    return { projection, counts };
  }
  const event = (stream: string): ProjectedEvent => ({ streamName: stream, position: 1, checkpoint: { tx: 1, pos: 1 }, type: 'E', data: {}, metadata: {} });

  it('stops at a load the cache answers whole, before the fold, and records the rows it does not hold', async () => {
    const cache = new RowCache();
    const first = cache.view('p');
    first.note('t', 'a', '{"id":"a"}');
    cache.committed('p', 'q', first);
    const { projection, counts } = oneTable();
    const guess = (tx: Transaction) => withRowCache(tx, cache.view('q', { guess: true }));
    expect(readsFor(projection, [event('a')], guess)).toEqual([]);
    const partly = readsFor(projection, [event('a'), event('b')], guess);
    expect(partly).toHaveLength(1);
    expect(partly[0]!.params).toEqual([JSON.stringify([{ id: 'b' }])]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(counts.folds).toBe(0);
  });
});

const DAY = 86_400_000;
const ctx = { actor: { role: 'operator' as const, id: 'test' } };

describe.each(databases)('the row cache in a projector group on $name', (database) => {
  let testDb: TestDb;
  let runtime: Runtime;

  beforeAll(async () => {
    testDb = await database.open();
    runtime = await openRuntime(loadConfig({}), { db: testDb.db });
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  /** Every row of the projection's tables, in a stable order. */
  async function rowsOf(projection: Projection): Promise<Record<string, unknown[]>> {
    const out: Record<string, unknown[]> = {};
    for (const table of projection.tables) {
      const { rows } = await runtime.db.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM ${table} t ORDER BY 1`);
      out[table] = rows.map((r) => r.row);
    }
    return out;
  }

  /** The rows a projector without a cache makes of the whole log: the projection reset and caught up again. */
  async function rowsWithoutCache(projection: Projection): Promise<Record<string, unknown[]>> {
    await resetProjection(runtime.db, projection);
    await new Projector({ store: runtime.store, db: runtime.db }, projection).catchUp();
    return rowsOf(projection);
  }

  /** The group's database, counting the loads of session rows. */
  function countingSessionLoads(): { db: Db; loads: () => number } {
    let loads = 0;
    const counting = (tx: Transaction): Transaction => ({
      ...tx,
      query: (sql, params, options) => {
        if (sql.startsWith('SELECT to_jsonb(r)') && /\bFROM sessions\s/.test(sql)) loads++;
        return tx.query(sql, params, options);
      },
    });
    const db: Db = { ...runtime.db, transaction: (fn, options) => runtime.db.transaction((tx, opened) => fn(counting(tx), opened), options) };
    return { db, loads: () => loads };
  }

  async function following(db: Db = runtime.db): Promise<ProjectorGroup> {
    for (const projection of runtime.projections) await new Projector({ store: runtime.store, db: runtime.db }, projection).catchUp();
    const group = new ProjectorGroup({ store: runtime.store, db }, { idleRecheckMs: 60_000 });
    for (const projection of runtime.projections) group.join(projection);
    return group;
  }

  const applied = async (position: number) => {
    const deadline = Date.now() + 10_000;
    while (!(await hasReached({ store: runtime.store, db: runtime.db }, runtime.projections, position))) {
      if (Date.now() > deadline) throw new Error(`position ${position} not applied after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it("does not read again the session row the previous command's events wrote", async () => {
    const counted = countingSessionLoads();
    const group = await following(counted.db);
    try {
      const started = await startSession(runtime.commandDeps, ctx);
      await applied(started.position);
      const before = counted.loads();
      for (let i = 0; i < 8; i++) {
        const reply = await executeSessionCommand(runtime.commandDeps, started.session_id, { type: 'post_user_message', text: `message ${i}` }, ctx);
        await applied(reply.position);
      }
      // Eight batches, each with the session's events: its row comes from the cache every time.
      expect(counted.loads() - before).toBe(0);
    } finally {
      await group.stop();
    }
  });

  it('gives every projection the rows a projector without a cache makes of the same log, through a reset by another writer', async () => {
    const group = await following();
    try {
      const from = Date.parse('2026-11-01T00:00:00Z');
      const generate = (seed: number) => generatedSessions(new Rng(seed), { from, to: from + 7 * DAY, count: 40 });
      await appendSessions(runtime.store, generate(20261203), { writers: 4, untilEvents: 1_500, perCommand: true });
      await applied((await runtime.store.head()).position);
      // Another process resets the sessions projection while the group idles: its cache is of a place gone.
      const sessions = runtime.projections.find((p) => p.name === 'sessions')!;
      await resetProjection(runtime.db, sessions);
      await appendSessions(runtime.store, generate(20261204), { writers: 4, untilEvents: 1_500, perCommand: true });
      await applied((await runtime.store.head()).position);
    } finally {
      await group.stop();
    }
    for (const projection of runtime.projections) {
      const live = await rowsOf(projection);
      // The generated log registers no entities and writes no knowledge; it feeds the others.
      if (['sessions', 'transcript', 'plans', 'executions'].includes(projection.name)) expect(Object.values(live).some((rows) => rows.length > 0), projection.name).toBe(true);
      expect(await rowsWithoutCache(projection), projection.name).toEqual(live);
    }
  }, 120_000);
});
