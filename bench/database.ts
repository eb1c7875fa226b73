// A fresh PostgreSQL database per bench run, migrated, and dropped again at the end (as test/support does).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Db } from '../src/ports/db.ts';
import { migrate } from '../src/adapters/db/migrate.ts';
import { postgresDb } from '../src/adapters/db/postgres.ts';

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  readonly db: Db;
  drop(): Promise<void>;
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(serverUrl: string, poolSize: number): Promise<BenchDatabase> {
  const name = `nomos_bench_${randomBytes(5).toString('hex')}`;
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = postgresDb(url.toString(), { max: poolSize });
  await migrate(db);
  return {
    name,
    url: url.toString(),
    db,
    async drop() {
      await db.close();
      await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Versions and size of the machine's PostgreSQL, for the table's header. */
export async function serverVersion(db: Db): Promise<string> {
  const { rows } = await db.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  return rows[0]?.v ?? 'unknown';
}
