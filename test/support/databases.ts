// The databases every suite runs on: PGlite always, and a real PostgreSQL server when DATABASE_URL is set.
// Each open() gives a fresh, migrated database (a new PGlite in memory, or a new PostgreSQL database that
// is dropped again on close), so suites never see each other's events.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Db } from '../../src/ports/db.ts';
import { migrate } from '../../src/adapters/db/migrate.ts';
import { pgliteDb } from '../../src/adapters/db/pglite.ts';
import { postgresDb } from '../../src/adapters/db/postgres.ts';

export interface TestDb {
  readonly db: Db;
  /** Connection string of the fresh database (postgres only), for helpers that open their own connections. */
  readonly url: string | null;
  close(): Promise<void>;
}

export interface TestDatabase {
  readonly name: 'pglite' | 'postgres';
  open(options?: { migrated?: boolean }): Promise<TestDb>;
}

const pglite: TestDatabase = {
  name: 'pglite',
  async open(options = {}) {
    const db = await pgliteDb();
    if (options.migrated !== false) await migrate(db);
    return { db, url: null, close: () => db.close() };
  },
};

function postgres(serverUrl: string): TestDatabase {
  return {
    name: 'postgres',
    async open(options = {}) {
      const name = `nomos_test_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      const db = postgresDb(url.toString(), { max: 20 });
      if (options.migrated !== false) await migrate(db);
      return {
        db,
        url: url.toString(),
        async close() {
          await db.close();
          const admin2 = new pg.Client({ connectionString: serverUrl });
          await admin2.connect();
          try {
            await admin2.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          } finally {
            await admin2.end();
          }
        },
      };
    },
  };
}

export const databases: TestDatabase[] = process.env.DATABASE_URL ? [pglite, postgres(process.env.DATABASE_URL)] : [pglite];
export const postgresDatabase: TestDatabase | null = process.env.DATABASE_URL ? postgres(process.env.DATABASE_URL) : null;
