// A live batch in one round trip (src/projections/projector.ts, applyGuessed): the projector works the batch out
// from the events its process just appended (SqlEventStore.guessed) and sends its writes with the statement that
// checks the guess (migrations/019). What it assumes must hold exactly, or nothing commits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlEventStore } from '../../src/adapters/eventstore/sql.ts';
import { executeSessionCommand, startSession } from '../../src/commands/session.ts';
import { loadConfig } from '../../src/config.ts';
import type { Db, TransactionOptions } from '../../src/ports/db.ts';
import type { Checkpoint } from '../../src/ports/event-store.ts';
import { hasReached, rebuildProjection } from '../../src/projections/projector.ts';
import { type Runtime, openRuntime } from '../../src/runtime.ts';
import { databases, postgresDatabase, type TestDb } from '../support/databases.ts';
import { projectionRows } from './feed.ts';

/** Data whose keys JavaScript and jsonb order differently, with what PostgreSQL cannot hold as it is. */
const awkward = (n: number) => ({
  zeta: n,
  a: 'NUL \u0000 and a lone \ud800 surrogate',
  '10': 'ten',
  '2': 'two',
  nested: { longer_key: [{ y: 1, x: 2 }], k: null, 'é': 'accent', e: 'plain' },
  big: 1e21,
  small: 0.1,
});

describe.each(databases)('the guessed page on $name', (database) => {
  let testDb: TestDb;
  let store: SqlEventStore;
  let other: SqlEventStore;
  beforeAll(async () => {
    testDb = await database.open();
    store = new SqlEventStore(testDb.db);
    // Another process's store on the same log.
    other = new SqlEventStore(testDb.db);
  });
  afterAll(async () => {
    await store?.close();
    await other?.close();
    await testDb?.close();
  });

  const head = async (): Promise<Checkpoint> => (await store.append(`head-${Math.random()}`, [{ type: 'Head', data: {}, metadata: {} }], { expectedVersion: 'any' })).checkpoint;

  it('is the read page exactly: the same events, values, key order and metadata a read gives', async () => {
    const after = await head();
    await store.append('guess-a', [
      { type: 'A', data: awkward(1), metadata: { occurred_at: '2026-12-04T00:00:00.000Z', actor: { role: 'user', id: 'u' }, extra: 'left out' } },
      { type: 'B', data: awkward(2), metadata: {} },
    ], { expectedVersion: 'no_stream' });
    await store.append('guess-b', [{ type: 'C', data: { only: true }, metadata: { client: 'cli', actor: null } }], { expectedVersion: 'any' });
    const guessed = store.guessed(after, 500);
    const read = await store.readAllProjected({ after, limit: 500 });
    expect(guessed).not.toBeNull();
    expect(guessed!.events).toHaveLength(3);
    expect(guessed!.events).toEqual(read.events);
    // toEqual does not compare the order of keys; the text does.
    expect(JSON.stringify(guessed!.events)).toBe(JSON.stringify(read.events));
    expect(guessed!.events[0]!.data.a).toBe('NUL \ufffd and a lone \ufffd surrogate');
  });

  it('answers null when it cannot know: nothing appended since, a large event in between, or more than a page', async () => {
    const after = await head();
    expect(store.guessed(after, 500)).toBeNull();
    await store.append('guess-large', [{ type: 'Large', data: { out: 'x'.repeat(20_000) }, metadata: {} }], { expectedVersion: 'any' });
    await store.append('guess-small', [{ type: 'Small', data: {}, metadata: {} }], { expectedVersion: 'any' });
    expect(store.guessed(after, 500)).toBeNull();
    const later = await head();
    await store.append('guess-many', [1, 2, 3].map((n) => ({ type: 'N', data: { n }, metadata: {} })), { expectedVersion: 'any' });
    expect(store.guessed(later, 3)).toBeNull();
    expect(store.guessed(later, 4)?.events).toHaveLength(3);
  });

  it('checks in the database: passes on the right page and says what follows, fails with NX001 on another', async () => {
    const expectOn = async (statement: { sql: string; params?: readonly unknown[] }) => {
      const { rows } = await testDb.db.query<{ expected: boolean; pending: boolean; more: boolean }>(statement.sql, statement.params);
      return rows[0]!;
    };
    const after = await head();
    await store.append('check-a', [{ type: 'A', data: { n: 1 }, metadata: {} }], { expectedVersion: 'any' });
    const guessed = store.guessed(after, 500)!;
    expect(await expectOn(guessed.expect)).toEqual({ expected: true, pending: false, more: false });
    // Another process appends after it: the guess is still the page's start, and the page goes on.
    await other.append('check-b', [{ type: 'B', data: {}, metadata: {} }], { expectedVersion: 'any' });
    expect(await expectOn(guessed.expect)).toEqual({ expected: true, pending: false, more: true });
    // Another process's event first: this store's guess after it is not the page's start.
    const before = await head();
    await other.append('check-c', [{ type: 'C', data: {}, metadata: {} }], { expectedVersion: 'any' });
    await store.append('check-d', [{ type: 'D', data: {}, metadata: {} }], { expectedVersion: 'any' });
    const wrong = store.guessed(before, 500)!;
    expect(wrong.events.map((e) => e.type)).toEqual(['D']);
    await expect(expectOn(wrong.expect)).rejects.toMatchObject({ code: 'NX001' });
  });
});

/** The database, every call passed on, noting each transaction that checked a guess and how it ended. */
function watched(db: Db): { db: Db; guesses: { committed: number; failed: number } } {
  const guesses = { committed: 0, failed: 0 };
  const transaction: Db['transaction'] = async (fn, options?: TransactionOptions) => {
    const guessing = options?.opening?.some((s) => s.sql.includes('nomos_expect')) === true;
    try {
      const result = await db.transaction(fn, options);
      if (guessing) guesses.committed++;
      return result;
    } catch (error) {
      if (guessing) guesses.failed++;
      throw error;
    }
  };
  return { db: new Proxy(db, { get: (target, key) => (key === 'transaction' ? transaction : Reflect.get(target, key, target) as unknown) }), guesses };
}

/** Every row of every projection's tables (feed.ts, projectionRows). */
async function snapshot(db: Db, runtime: Runtime): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const projection of runtime.projections) Object.assign(out, await projectionRows(db, projection));
  return out;
}

// The one-round-trip way is taken on PostgreSQL only (on the embedded database a round trip costs next to nothing):
// there is nothing of it to watch on PGlite, whose live batches every other suite covers.
describe.runIf(postgresDatabase !== null)('live batches in one round trip on PostgreSQL (needs DATABASE_URL: PGlite does not take this way)', () => {
  let testDb: TestDb;
  let runtime: Runtime;
  let guesses: { committed: number; failed: number };
  beforeAll(async () => {
    testDb = await postgresDatabase!.open();
    const watching = watched(testDb.db);
    guesses = watching.guesses;
    runtime = await openRuntime(loadConfig({}), { db: watching.db });
    runtime.startProjectors();
  });
  afterAll(async () => {
    await runtime?.close();
    await testDb?.close();
  });

  it('commits commands the one-round-trip way, and another process’s appends between them make it fall back; the rows equal a rebuild’s', async () => {
    const deps = runtime.commandDeps;
    const ctx = { actor: { role: 'operator' as const, id: 'ops' } };
    // Another process, whose appends after its first tell this one nothing for three seconds (its NOTIFYs spaced
    // so; closing it waits for the last): this process's projector learns of them by its own next batch, whose
    // guess then misses them.
    const another = new SqlEventStore(testDb.db, { notifyEveryMs: 3_000 });
    let last = 0;
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await startSession(deps, ctx)).session_id);
      for (let round = 0; round < 10; round++) {
        for (const id of ids) {
          const answer = await executeSessionCommand(deps, id, { type: 'post_user_message', text: `message ${round} with \u0000 in it` }, ctx);
          last = answer.position;
          // As the API answers: once the read models show it (a batch a command, or few).
          expect(await runtime.readWait.until(last, 10_000)).toBe(true);
        }
        // Another process's event in the log: this process's next guess starts after it or misses it.
        if (round % 3 === 1) last = (await another.append(`elsewhere-${round}`, [{ type: 'Elsewhere', data: { round }, metadata: {} }], { expectedVersion: 'any' })).position;
      }
    } finally {
      await another.close();
    }
    const deadline = Date.now() + 15_000;
    while (!(await hasReached({ store: runtime.store, db: runtime.db }, runtime.projections, last))) {
      if (Date.now() > deadline) throw new Error(`projections did not catch up to ${last}: ${JSON.stringify((await testDb.db.query('SELECT name, tx, pos FROM projection_checkpoints')).rows)} ${JSON.stringify((await testDb.db.query('SELECT global_position, transaction_id::text, type FROM events ORDER BY global_position DESC LIMIT 5')).rows)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(guesses.committed).toBeGreaterThan(10);
    expect(guesses.failed).toBeGreaterThan(0);
    const live = await snapshot(testDb.db, runtime);
    expect(live.sessions).toHaveLength(4);
    for (const projection of runtime.projections) await rebuildProjection({ store: runtime.store, db: testDb.db }, projection);
    expect(await snapshot(testDb.db, runtime)).toEqual(live);
  });
});
