// The sealer on PGlite and PostgreSQL: every committed event becomes a leaf in position order (gaps of rolled-back
// appends skipped), checkpoints are signed notes over the tree's root, the stored nodes give proofs that an
// RFC 9162 verifier accepts, appends racing the sealer are never skipped, and a second sealer can neither fork
// the tree nor seal with another key.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { generateSigningKey } from '../../src/log/keys.ts';
import { leafOf } from '../../src/log/leaf.ts';
import { leafHash, rootOfLeaves, verifyConsistency, verifyInclusion } from '../../src/log/merkle.ts';
import { openNote } from '../../src/log/note.ts';
import { consistencyOf, inclusionOf } from '../../src/log/proofs.ts';
import { Sealer, SealRefused, type SealSettings, logOrigin } from '../../src/log/sealer.ts';
import { eventsBetween, latestCheckpoint, listCheckpoints, SealMoved, sealState } from '../../src/log/store.ts';
import { databases, type TestDb } from '../support/databases.ts';
import { until } from '../support/until.ts';

const event = (n: number) => ({ type: 'Noted', data: { n, text: `event ${n}`, nested: { b: 2, a: [1, 'x'] } }, metadata: { actor: { role: 'operator', id: 'alice' } } });

describe.each(databases)('the sealer on $name', (database) => {
  let testDb: TestDb;
  let store: SqlEventStore;
  let stops: AbortController[];

  beforeEach(async () => {
    testDb = await database.open();
    store = new SqlEventStore(testDb.db);
    stops = [];
  });
  afterEach(async () => {
    for (const stop of stops) stop.abort();
    await store.close();
    await testDb.close();
  });

  const settings = (over: Partial<SealSettings> = {}): SealSettings => ({ sealMs: 20, checkpointEvery: { events: 10, ms: 200 }, key: generateSigningKey(), origin: null, ...over });
  /** Runs a sealer until the test ends; its end (a refusal, an error) is its promise's. */
  const run = (sealer: Sealer) => {
    const stop = new AbortController();
    stops.push(stop);
    return sealer.run(stop.signal);
  };
  const append = async (stream: string, from: number, count: number) => {
    for (let i = 0; i < count; i++) await store.append(stream, [event(from + i)], { expectedVersion: 'any' });
  };
  const sealedUpTo = (size: number) => until(`the tree at ${size} leaves with a checkpoint`, async () => ((await latestCheckpoint(testDb.db))?.treeSize === size ? true : undefined), 15_000);

  it('seals every committed event in position order, skipping gaps, and signs checkpoints a verifier accepts', async () => {
    const s = settings();
    void run(new Sealer(testDb.db, s)).catch(() => undefined);
    await append('notes-a', 0, 7);
    // An append that rolls back after drawing its positions leaves a gap, which is not a leaf.
    await expect(
      testDb.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata) VALUES (gen_random_uuid(), 'gone', 0, 'Noted', '{}', '{}'), (gen_random_uuid(), 'gone', 1, 'Noted', '{}', '{}')`);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await append('notes-b', 7, 8);
    await sealedUpTo(15);

    const state = (await sealState(testDb.db))!;
    expect(state.origin).toBe(logOrigin(s.key));
    const events = await eventsBetween(testDb.db, 0, Number.MAX_SAFE_INTEGER, 1_000);
    expect(events).toHaveLength(15);
    const { rows } = await testDb.db.query<{ leaf_index: string; position: string }>('SELECT leaf_index, position FROM log_leaves ORDER BY leaf_index');
    expect(rows.map((r) => Number(r.position))).toEqual(events.map((e) => e.position));
    expect(rows.map((r) => Number(r.leaf_index))).toEqual(events.map((_e, i) => i));
    const positions = events.map((e) => e.position);
    expect(positions.some((p, i) => i > 0 && p !== positions[i - 1]! + 1)).toBe(true);

    const checkpoint = (await latestCheckpoint(testDb.db))!;
    const leaves = events.map((e) => leafHash(leafOf(e)));
    expect(checkpoint.root.equals(rootOfLeaves(leaves))).toBe(true);
    const opened = openNote(checkpoint.note, state.origin, s.key);
    expect(opened.checkpoint).toEqual({ origin: state.origin, size: 15, root: checkpoint.root, extensions: [] });
    expect(checkpoint.note).toBe(`${state.origin}\n15\n${checkpoint.root.toString('base64')}\n\n${checkpoint.note.split('\n\n')[1]}`);

    for (const [i, e] of events.entries()) {
      const proof = await inclusionOf(testDb.db, e.position, 15);
      expect(proof.leaf_index).toBe(i);
      expect(Buffer.from(proof.leaf, 'base64').equals(leafOf(e))).toBe(true);
      expect(verifyInclusion(i, 15, leafHash(Buffer.from(proof.leaf, 'base64')), proof.hashes.map((h) => Buffer.from(h, 'base64')), checkpoint.root)).toBe(true);
    }
    // Every earlier checkpoint is a prefix of the latest.
    for (const earlier of await listCheckpoints(testDb.db, 100, 15)) {
      const { hashes } = await consistencyOf(testDb.db, earlier.treeSize, 15);
      expect(earlier.root.equals(rootOfLeaves(leaves.slice(0, earlier.treeSize)))).toBe(true);
      expect(verifyConsistency(earlier.treeSize, 15, earlier.root, checkpoint.root, hashes.map((h) => Buffer.from(h, 'base64')))).toBe(true);
    }
  });

  it('never skips an event appended while it seals, whatever order the appends commit in', async () => {
    void run(new Sealer(testDb.db, settings({ sealMs: 1, checkpointEvery: { events: 1, ms: null }, batch: 7 }))).catch(() => undefined);
    // Many writers at once, to many streams: positions are taken and committed out of order.
    await Promise.all(Array.from({ length: 12 }, (_, w) => append(`race-${w}`, w * 100, 15)));
    await sealedUpTo(180);
    const { rows } = await testDb.db.query<{ n: string; distinct_positions: string; max_index: string }>('SELECT count(*)::int AS n, count(DISTINCT position)::int AS distinct_positions, max(leaf_index)::int AS max_index FROM log_leaves');
    expect(rows[0]).toEqual({ n: 180, distinct_positions: 180, max_index: 179 });
    const { rows: unsealed } = await testDb.db.query('SELECT global_position FROM events WHERE global_position NOT IN (SELECT position FROM log_leaves)');
    expect(unsealed).toEqual([]);
    const { rows: order } = await testDb.db.query<{ ok: boolean }>('SELECT bool_and(p > prev) AS ok FROM (SELECT position AS p, lag(position) OVER (ORDER BY leaf_index) AS prev FROM log_leaves) t WHERE prev IS NOT NULL');
    expect(order[0]?.ok).toBe(true);
  });

  // One connection on PGlite: a transaction held open there blocks every other statement, so this is PostgreSQL's.
  it.runIf(database.name === 'postgres')('waits for an append still open below positions committed after it, then seals it in its place, round after round (PostgreSQL only: PGlite has one connection, so no append can stay open beside another)', async () => {
    void run(new Sealer(testDb.db, settings({ sealMs: 1, checkpointEvery: { events: 1, ms: null } }))).catch(() => undefined);
    await append('before', 0, 3);
    await sealedUpTo(3);
    // Rounds, because the race is one of timing: a horizon read from a snapshot's xmax sealed past the open append
    // in 1 to 3 rounds of 40 under load (an appender's xid can lie at or above the xmax of a later snapshot).
    for (let round = 0; round < 12; round++) {
      const before = 3 + round * 3;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let drawn!: () => void;
      const inserted = new Promise<void>((resolve) => (drawn = resolve));
      // An append that has drawn its position and not committed, while later ones commit around it.
      const open = testDb.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO streams (stream_name, version) VALUES ($1, 0)`, [`slow-${round}`]);
        await tx.query(`INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata) VALUES (gen_random_uuid(), $1, 0, 'Noted', '{"slow": true}', '{}')`, [`slow-${round}`]);
        drawn();
        await held;
      });
      await inserted;
      const others = [new SqlEventStore(testDb.db), new SqlEventStore(testDb.db)];
      await Promise.all(others.map((o, i) => o.append(`after-${round}-${i}`, [event(10 + i)], { expectedVersion: 'any' })));
      // The sealer sees events above the open one committed, and must not seal past it.
      await new Promise((r) => setTimeout(r, 100));
      const size = (await sealState(testDb.db))?.size;
      release();
      await open;
      for (const o of others) await o.close();
      expect(size, `round ${round}`).toBe(before);
      await sealedUpTo(before + 3);
    }
    const { rows } = await testDb.db.query<{ slow: boolean }>("SELECT (e.data->>'slow') IS NOT NULL AS slow FROM log_leaves l JOIN events e ON e.global_position = l.position ORDER BY l.leaf_index");
    expect(rows.map((r) => r.slow)).toEqual([false, false, false, ...Array.from({ length: 12 }, () => [true, false, false]).flat()]);
  });

  it('refuses to seal with another key, writing nothing', async () => {
    const first = settings();
    void run(new Sealer(testDb.db, first)).catch(() => undefined);
    await append('notes', 0, 10);
    await sealedUpTo(10);
    const before = await testDb.db.query('SELECT count(*) AS n FROM log_nodes');
    await expect(run(new Sealer(testDb.db, settings()))).rejects.toThrow(SealRefused);
    await expect(run(new Sealer(testDb.db, settings({ key: first.key, origin: 'example.com/other' })))).rejects.toThrow(/sealed under the origin/);
    expect((await testDb.db.query('SELECT count(*) AS n FROM log_nodes')).rows).toEqual(before.rows);
  });

  it('cannot fork: two sealers with the key at once (one lost its lease) leave one tree, every event once', async () => {
    const s = settings({ sealMs: 1, batch: 3 });
    let running = 0;
    const moved: unknown[] = [];
    const start = () => {
      running++;
      void run(new Sealer(testDb.db, s)).catch((e: unknown) => moved.push(e)).finally(() => running--);
    };
    start();
    start();
    await Promise.all([append('fork-a', 0, 20), append('fork-b', 20, 20)]);
    // The loser of a race stops at its first moved seal (SealMoved); two keep sealing, as after a lost lease.
    await until('all 40 sealed', async () => {
      if ((await sealState(testDb.db))?.size === 40) return true;
      while (running < 2) start();
      return undefined;
    }, 15_000);
    expect(moved.every((e) => e instanceof SealMoved)).toBe(true);
    const { rows } = await testDb.db.query<{ n: string; d: string }>('SELECT count(*)::int AS n, count(DISTINCT position)::int AS d FROM log_leaves');
    expect(rows[0]).toEqual({ n: 40, d: 40 });
    const events = await eventsBetween(testDb.db, 0, Number.MAX_SAFE_INTEGER, 100);
    await until('a checkpoint at 40', async () => ((await latestCheckpoint(testDb.db))?.treeSize === 40 ? true : undefined), 15_000);
    expect((await latestCheckpoint(testDb.db))!.root.equals(rootOfLeaves(events.map((e) => leafHash(leafOf(e)))))).toBe(true);
  });
});
