// A transaction's opening and closing (TransactionOptions.opening, Transaction.closeWith): the statements run
// inside the transaction, the opening's last rows reach the function, and a failure anywhere commits nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases, type TestDb } from '../support/databases.ts';

describe.each(databases)('transaction opening and closing on $name', (database) => {
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
        tx.closeWith(["INSERT INTO tx_marks VALUES (3, 'closing')"]);
        await tx.query('INSERT INTO tx_marks VALUES ($1, $2)', [2, 'body']);
        return opened;
      },
      { opening: ["INSERT INTO tx_marks VALUES (1, 'opening')", "SELECT n, note FROM tx_marks WHERE n = 1"] },
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

  it('commits nothing when the closing fails, and reports its error', async () => {
    const before = await marks();
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query("INSERT INTO tx_marks VALUES (10, 'body')");
        // n = 1 exists: the closing's second statement fails after its first ran.
        tx.closeWith(["INSERT INTO tx_marks VALUES (11, 'closing')", "INSERT INTO tx_marks VALUES (1, 'duplicate')"]);
      }),
    ).rejects.toThrow(/duplicate key|unique/);
    expect(await marks()).toEqual(before);
  });

  it('commits nothing when the opening fails, and never calls the function', async () => {
    const before = await marks();
    let called = false;
    await expect(
      t.db.transaction(
        () => {
          called = true;
          return Promise.resolve();
        },
        { opening: ["INSERT INTO tx_marks VALUES (20, 'opening')", 'SELECT no_such_column FROM tx_marks'] },
      ),
    ).rejects.toThrow(/no_such_column/);
    expect(called).toBe(false);
    expect(await marks()).toEqual(before);
    // The connection is usable afterwards: the failed transaction was rolled back, not left open.
    expect((await t.db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
