// A transaction's opening and the statements it sends without waiting (TransactionOptions.opening,
// Transaction.send): the statements run inside the transaction and in order, the opening's last rows reach the
// function, and a failure anywhere commits nothing and is the error reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREPARED } from '../../src/ports/db.ts';
import { databases, type TestDb } from '../support/databases.ts';

describe.each(databases)('transaction opening and statements sent on $name', (database) => {
  let t: TestDb;

  beforeAll(async () => {
    t = await database.open();
    await t.db.exec('CREATE TABLE tx_marks (n int PRIMARY KEY, note text NOT NULL)');
  });

  afterAll(async () => {
    await t.close();
  });

  const marks = async () => (await t.db.query<{ n: number; note: string }>('SELECT n, note FROM tx_marks ORDER BY n')).rows;

  it('runs the opening inside the transaction and gives the function the rows of its last statement', async () => {
    const seen = await t.db.transaction(
      async (tx, opened) => {
        await tx.query('INSERT INTO tx_marks VALUES ($1, $2)', [2, 'body']);
        const rows = await opened;
        tx.send("INSERT INTO tx_marks VALUES (3, 'closing')");
        return rows;
      },
      {
        opening: [
          { sql: 'INSERT INTO tx_marks VALUES ($1, $2)', params: [1, 'opening'], options: PREPARED },
          { sql: 'SELECT n, note FROM tx_marks WHERE n = $1', params: [1] },
        ],
      },
    );
    // The opening's own insert is visible to its next statement: both ran in the transaction, in order.
    expect(seen).toEqual([{ n: 1, note: 'opening' }]);
    expect(await marks()).toEqual([
      { n: 1, note: 'opening' },
      { n: 2, note: 'body' },
      { n: 3, note: 'closing' },
    ]);
  });

  it('without an opening, gives the function no rows', async () => {
    const opened = await t.db.transaction((_tx, rows) => Promise.resolve(rows));
    expect(opened).toEqual([]);
  });

  it('commits nothing when the last statement sent fails, and reports its error', async () => {
    const before = await marks();
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query("INSERT INTO tx_marks VALUES (10, 'body')");
        // n = 1 exists: the second statement sent last fails after the first ran.
        tx.send("INSERT INTO tx_marks VALUES (11, 'closing')");
        tx.send("INSERT INTO tx_marks VALUES (1, 'duplicate')");
      }),
    ).rejects.toThrow(/duplicate key|unique/);
    expect(await marks()).toEqual(before);
  });

  it('commits nothing when the opening fails, even what the function sent without waiting for it', async () => {
    const before = await marks();
    const opening = [{ sql: "INSERT INTO tx_marks VALUES (20, 'opening')" }, { sql: 'SELECT no_such_column FROM tx_marks' }];
    // The function waits for the opening's rows: their error is its error.
    await expect(
      t.db.transaction(
        async (tx, opened) => {
          await opened;
          tx.send("INSERT INTO tx_marks VALUES (21, 'sent')");
        },
        { opening },
      ),
    ).rejects.toThrow(/no_such_column/);
    // The function never looks at them: the opening's error is still the transaction's.
    await expect(t.db.transaction((tx) => Promise.resolve(tx.send("INSERT INTO tx_marks VALUES (22, 'sent')")), { opening })).rejects.toThrow(/no_such_column/);
    expect(await marks()).toEqual(before);
    // The connection is usable afterwards: the failed transaction was rolled back, not left open.
    expect((await t.db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('never runs what was sent behind an opening that cannot be parsed outside the transaction', async () => {
    const before = await marks();
    // BEGIN must not go with a statement that fails to parse (a text that fails to parse runs none of its statements).
    await expect(t.db.transaction((tx) => Promise.resolve(tx.send("INSERT INTO tx_marks VALUES (23, 'sent')")), { opening: [{ sql: 'SELEC 1' }] })).rejects.toThrow(/syntax error/);
    expect(await marks()).toEqual(before);
  });

  it('sends statements without waiting, runs them in order with the ones waited for, and commits them', async () => {
    const note = await t.db.transaction(async (tx) => {
      tx.send("INSERT INTO tx_marks VALUES (30, 'sent')");
      tx.send("UPDATE tx_marks SET note = 'updated' WHERE n = 30");
      const { rows } = await tx.query<{ note: string }>('SELECT note FROM tx_marks WHERE n = $1', [30]);
      tx.send('INSERT INTO tx_marks VALUES ($1, $2)', [31, 'sent after']);
      return rows[0]?.note;
    });
    expect(note).toBe('updated');
    expect((await marks()).filter((m) => m.n >= 30)).toEqual([
      { n: 30, note: 'updated' },
      { n: 31, note: 'sent after' },
    ]);
  });

  it.runIf(database.name === 'postgres')('fails, and nothing else, when its connection is lost between two statements (PostgreSQL only: PGlite has no connection to lose)', async () => {
    const before = await marks();
    await expect(
      t.db.transaction(async (tx) => {
        const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await tx.query("INSERT INTO tx_marks VALUES (50, 'before the loss')");
        // Ended from another connection while nothing of this transaction is in flight.
        await t.db.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await tx.query('SELECT 1');
      }),
    ).rejects.toThrow();
    expect(await marks()).toEqual(before);
    // The lost connection was not put back: the pool answers on a live one.
    for (let i = 0; i < 12; i++) expect((await t.db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('commits nothing when a statement sent fails, whatever the function returned, and reports that statement', async () => {
    const before = await marks();
    await expect(
      t.db.transaction(async (tx) => {
        tx.send("INSERT INTO tx_marks VALUES (40, 'sent')");
        tx.send("INSERT INTO tx_marks VALUES (40, 'duplicate')");
        tx.send("INSERT INTO tx_marks VALUES (41, 'after the failure')");
        return Promise.resolve('the function itself succeeded');
      }),
    ).rejects.toThrow(/duplicate key|unique/);
    // A statement waited for behind the failed one fails as "transaction aborted": the cause is reported instead.
    await expect(
      t.db.transaction(async (tx) => {
        tx.send("INSERT INTO tx_marks VALUES (1, 'duplicate')");
        await tx.query('SELECT 1');
      }),
    ).rejects.toThrow(/duplicate key|unique/);
    expect(await marks()).toEqual(before);
    expect((await t.db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
