// Reading ahead (src/projections/read-ahead.ts): which reads of a projection may go out before its batch is
// known, and how a transaction answers them: once each, and never after the projection wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREPARED, PREPARED_READ, type Transaction } from '../../src/ports/db.ts';
import type { ProjectedEvent } from '../../src/ports/event-store.ts';
import type { Projection } from '../../src/projections/projection.ts';
import { readsFor, sendAhead } from '../../src/projections/read-ahead.ts';
import { databases, type TestDb } from '../support/databases.ts';

const event = (type: string, n: number): ProjectedEvent => ({
  streamName: `s-${n}`,
  position: n,
  checkpoint: { tx: 1, pos: n },
  type,
  data: { n },
  metadata: { occurred_at: null, actor: null, client: null },
});

const projection = (applyBatch: Projection['applyBatch']): Projection => ({ name: 'p', version: 1, tables: [], handles: new Set(['A']), applyBatch });

describe('readsFor', () => {
  it('records the reads marked readOnly that the projection makes before it writes or waits, for the events it handles', () => {
    const reads = readsFor(
      projection(async (tx, events) => {
        await Promise.all([
          tx.query('SELECT a FROM t WHERE n = ANY($1)', [events.map((e) => e.data.n)], PREPARED_READ),
          tx.query('SELECT b FROM u', [], PREPARED_READ),
        ]);
        // Never reached: the reads above are not answered.
        await tx.query('SELECT c FROM v', [], PREPARED_READ);
      }),
      [event('A', 1), event('Ignored', 2), event('A', 3)],
    );
    expect(reads).toEqual([
      { sql: 'SELECT a FROM t WHERE n = ANY($1)', params: [[1, 3]], options: PREPARED_READ },
      { sql: 'SELECT b FROM u', params: [], options: PREPARED_READ },
    ]);
  });

  it('stops at the first statement that is not a read marked readOnly: a read after it could see a write', () => {
    const sends = readsFor(
      projection(async (tx) => {
        tx.send('INSERT INTO t VALUES (1)');
        await tx.query('SELECT a FROM t', [], PREPARED_READ);
      }),
      [event('A', 1)],
    );
    expect(sends).toEqual([]);
    const unmarked = readsFor(
      projection(async (tx) => {
        void tx.query('SELECT a FROM t', [], PREPARED_READ);
        void tx.query('UPDATE t SET a = 1 RETURNING a', [], PREPARED);
        await tx.query('SELECT b FROM u', [], PREPARED_READ);
      }),
      [event('A', 1)],
    );
    expect(unmarked).toEqual([{ sql: 'SELECT a FROM t', params: [], options: PREPARED_READ }]);
  });

  it('reads nothing ahead for events the projection does not handle, or that it fails on', () => {
    let calls = 0;
    const counting = projection(async (tx) => {
      calls++;
      await tx.query('SELECT 1', [], PREPARED_READ);
    });
    expect(readsFor(counting, [event('Ignored', 1)])).toEqual([]);
    expect(calls).toBe(0);
    const throwing = projection(() => {
      throw new Error('not a batch it can apply');
    });
    expect(readsFor(throwing, [event('A', 1)])).toEqual([]);
  });
});

describe.each(databases)('sendAhead on $name', (database) => {
  let t: TestDb;

  beforeAll(async () => {
    t = await database.open();
    await t.db.exec('CREATE TABLE ahead_rows (id int PRIMARY KEY, n int NOT NULL); INSERT INTO ahead_rows VALUES (1, 10), (2, 20);');
  });

  afterAll(async () => {
    await t.close();
  });

  const READ = 'SELECT n FROM ahead_rows WHERE id = $1';
  const value = async (tx: Transaction, id: number) => (await tx.query<{ n: number }>(READ, [id], PREPARED_READ)).rows[0]?.n;

  it('answers a read sent ahead with that answer, once, and sends any other to the database', async () => {
    await t.db.transaction(async (tx) => {
      const seen = sendAhead(tx, [{ sql: READ, params: [1], options: PREPARED_READ }]);
      // Changed behind the projection's back (as no writer may): only a read that went to the database sees it.
      await tx.query('UPDATE ahead_rows SET n = n + 1');
      expect(await value(seen, 1)).toBe(10);
      expect(await value(seen, 1)).toBe(11);
      expect(await value(seen, 2)).toBe(21);
      throw new Error('roll back');
    }).catch((error: unknown) => expect(String(error)).toContain('roll back'));
  });

  it('sends every read to the database once the projection has written', async () => {
    await t.db.transaction(async (tx) => {
      const seen = sendAhead(tx, [{ sql: READ, params: [1], options: PREPARED_READ }]);
      seen.send('UPDATE ahead_rows SET n = n + 5 WHERE id = 1');
      expect(await value(seen, 1)).toBe(15);
      throw new Error('roll back');
    }).catch((error: unknown) => expect(String(error)).toContain('roll back'));
    expect((await t.db.query<{ n: number }>('SELECT n FROM ahead_rows ORDER BY id')).rows.map((r) => r.n)).toEqual([10, 20]);
  });
});
