// Migrations: each file applied once, in name order; a second run applies nothing (and reads, without a
// transaction per file, that all is applied); two processes migrating one PostgreSQL at once apply each file once.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate } from '../../src/adapters/db/migrate.ts';
import { postgresDb } from '../../src/adapters/db/postgres.ts';
import { databases } from '../support/databases.ts';

const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort();

describe.each(databases)('migrate ($name)', (database) => {
  it('applies every file once, in order, and nothing the second time', async () => {
    const test = await database.open({ migrated: false });
    try {
      expect(await migrate(test.db)).toEqual(files);
      expect(await migrate(test.db)).toEqual([]);
      const { rows } = await test.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
      expect(rows.map((r) => r.name)).toEqual(files);
    } finally {
      await test.close();
    }
  });

  it.runIf(database.name === 'postgres')('applies each file once when two processes migrate at once (PostgreSQL only: two processes cannot share a PGlite directory)', async () => {
    const test = await database.open({ migrated: false });
    const other = postgresDb(test.url!);
    try {
      const [a, b] = await Promise.all([migrate(test.db), migrate(other)]);
      expect([...a, ...b].sort()).toEqual(files);
    } finally {
      await other.close();
      await test.close();
    }
  });
});
