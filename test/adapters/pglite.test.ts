// The embedded database's adapter: PGlite on a thread of its own, reached by messages. What crosses must behave
// as it did in-thread: rows with their types, errors with their SQLSTATE and fields, transactions that hold the
// one connection until they end, NOTIFY, and a data directory that keeps what was committed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteDb } from '../../src/adapters/db/pglite.ts';
import type { Db } from '../../src/ports/db.ts';

describe('the embedded database on its own thread', () => {
  let db: Db;
  beforeAll(async () => {
    db = await pgliteDb();
    await db.exec('CREATE TABLE t (id int8 PRIMARY KEY, v text NOT NULL, at timestamptz NOT NULL DEFAULT now(), j jsonb, b bytea)');
  });
  afterAll(() => db.close());

  it('answers rows with their types: int8 as a number, timestamptz as a Date, jsonb parsed, bytea as bytes', async () => {
    await db.query('INSERT INTO t (id, v, j, b) VALUES ($1, $2, $3, $4)', [1, 'one', JSON.stringify({ x: [1, 2] }), new Uint8Array([7, 8])]);
    const { rows } = await db.query<{ id: number; v: string; at: Date; j: unknown; b: Uint8Array }>('SELECT id, v, at, j, b FROM t WHERE id = $1', [1]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.id).toBe(1);
    expect(rows[0]?.at).toBeInstanceOf(Date);
    expect(rows[0]?.j).toEqual({ x: [1, 2] });
    expect([...(rows[0]?.b ?? [])]).toEqual([7, 8]);
  });

  it('fails a statement with the database error as it was: message, SQLSTATE, constraint', async () => {
    const error = await db.query('INSERT INTO t (id, v) VALUES (1, $1)', ['again']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '23505', constraint: 't_pkey', table: 't' });
    expect((error as Error).message).toMatch(/duplicate key value violates unique constraint "t_pkey"/);
    // The connection is still usable after the error.
    expect((await db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM t')).rows[0]?.n).toBe(1);
  });

  it('commits a transaction that resolves, with its value, and rolls back one that throws, with its error', async () => {
    const value = await db.transaction(async (tx) => {
      await tx.query('INSERT INTO t (id, v) VALUES (2, $1)', ['two']);
      return 'kept';
    });
    expect(value).toBe('kept');
    const thrown = new Error('changed my mind');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, v) VALUES (3, $1)', ['three']);
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    const ids = (await db.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows.map((r) => r.id);
    expect(ids).toEqual([1, 2]);
  });

  it('rolls back a transaction whose statement failed, and the caller sees that failure', async () => {
    const error = await db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO t (id, v) VALUES (4, $1)', ['four']);
        await tx.query('INSERT INTO t (id, v) VALUES (1, $1)', ['duplicate']);
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '23505' });
    expect((await db.query('SELECT 1 FROM t WHERE id = 4')).rows).toHaveLength(0);
  });

  it('holds the one connection for an open transaction: a statement from outside runs after it ends', async () => {
    const order: string[] = [];
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = db.transaction(async (tx) => {
      order.push('transaction began');
      inside();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx.query('INSERT INTO t (id, v) VALUES (5, $1)', ['five']);
      order.push('transaction ends');
    });
    await entered;
    const outside = db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM t WHERE id = 5').then(({ rows }) => {
      order.push(`outside saw ${rows[0]?.n}`);
    });
    await Promise.all([transaction, outside]);
    expect(order).toEqual(['transaction began', 'transaction ends', 'outside saw 1']);
  });

  it('runs a script of several statements', async () => {
    await db.exec("INSERT INTO t (id, v) VALUES (6, 'six'); INSERT INTO t (id, v) VALUES (7, 'seven');");
    expect((await db.query('SELECT 1 FROM t WHERE id IN (6, 7)')).rows).toHaveLength(2);
  });

  it('passes NOTIFYs to each listener of the channel until it stops listening', async () => {
    const a: string[] = [];
    const b: string[] = [];
    const stopA = await db.listen('changes', (payload) => a.push(payload));
    const stopB = await db.listen('changes', (payload) => b.push(payload));
    await db.query("SELECT pg_notify('changes', 'first')");
    await until(() => a.length === 1 && b.length === 1);
    await stopA();
    await db.query("SELECT pg_notify('changes', 'second')");
    await until(() => b.length === 2);
    await stopB();
    await db.query("SELECT pg_notify('changes', 'third')");
    await db.query('SELECT 1'); // a notification would have crossed before this answer
    expect(a).toEqual(['first']);
    expect(b).toEqual(['first', 'second']);
  });
});

describe('the embedded database in a data directory', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nomos-pglite-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keeps what was committed across a close and a new start; refuses statements once closed', async () => {
    const first = await pgliteDb(dir);
    await first.exec('CREATE TABLE kept (v text)');
    await first.transaction(async (tx) => void (await tx.query('INSERT INTO kept VALUES ($1)', ['survives'])));
    await first.close();
    await expect(first.query('SELECT 1')).rejects.toThrow(/closed/);

    const second = await pgliteDb(dir);
    try {
      expect((await second.query<{ v: string }>('SELECT v FROM kept')).rows).toEqual([{ v: 'survives' }]);
    } finally {
      await second.close();
    }
  });
});

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
