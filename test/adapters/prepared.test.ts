// Statements prepared once per connection (QueryOptions.prepare) follow a changed search_path, as projection SQL
// needs when a rebuild points it at its shadow tables: PostgreSQL analyses and plans them again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREPARED } from '../../src/ports/db.ts';
import { databases, type TestDb } from '../support/databases.ts';

describe.each(databases)('prepared statements on $name', (database) => {
  let t: TestDb;

  beforeAll(async () => {
    t = await database.open();
    await t.db.exec(`
      CREATE SCHEMA prep_live; CREATE SCHEMA prep_shadow;
      CREATE TABLE prep_live.rows (n int PRIMARY KEY, v text NOT NULL);
      CREATE TABLE prep_shadow.rows (n int PRIMARY KEY, v text NOT NULL);
      INSERT INTO prep_live.rows VALUES (1, 'live'); INSERT INTO prep_shadow.rows VALUES (1, 'shadow');`);
  });

  afterAll(async () => {
    await t.close();
  });

  it('reads and writes the tables the search_path of the moment names, however often it ran before', async () => {
    const read = 'SELECT v FROM rows WHERE n = $1';
    const write = 'INSERT INTO rows (n, v) VALUES ($1, $2) ON CONFLICT (n) DO UPDATE SET v = EXCLUDED.v';
    const under = (schema: string) =>
      t.db.transaction(async (tx) => {
        await tx.query(`SET LOCAL search_path TO ${schema}, public`);
        await tx.query(write, [2, schema], PREPARED);
        const { rows } = await tx.query<{ v: string }>(read, [1], PREPARED);
        return rows[0]?.v;
      });
    // More than five runs: PostgreSQL may switch a prepared statement to a generic plan after five.
    for (let i = 0; i < 8; i++) {
      expect(await under('prep_live')).toBe('live');
      expect(await under('prep_shadow')).toBe('shadow');
    }
    const { rows } = await t.db.query<{ schema: string; v: string }>(
      "SELECT 'live' AS schema, v FROM prep_live.rows WHERE n = 2 UNION ALL SELECT 'shadow', v FROM prep_shadow.rows WHERE n = 2 ORDER BY 1",
    );
    expect(rows).toEqual([
      { schema: 'live', v: 'prep_live' },
      { schema: 'shadow', v: 'prep_shadow' },
    ]);
  });
});
