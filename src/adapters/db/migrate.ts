// Applies the plain SQL files in migrations/ in name order, each once, each in its own transaction.
// Safe to run twice and from several processes at once (an advisory lock serialises them).
import { readdir, readFile } from 'node:fs/promises';
import type { Db } from '../../ports/db.ts';
import { shipped } from '../../paths.ts';

export const MIGRATIONS_DIR = `${shipped('migrations')}/`;
const LOCK_KEY = 7_326_001; // arbitrary, fixed: "nomos migrations"

const UNDEFINED_TABLE = '42P01';

/** The migrations applied so far; none before the first run has made the table. */
async function appliedNames(db: Db): Promise<Set<string>> {
  try {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations');
    return new Set(rows.map((r) => r.name));
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return new Set();
    throw error;
  }
}

export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  // A start on an up-to-date database is this one read: what is applied is skipped without a transaction each.
  const known = await appliedNames(db);
  if (files.every((f) => known.has(f))) return [];
  // Under the lock: two CREATE TABLE IF NOT EXISTS at once can both try to create it (PostgreSQL then refuses one).
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  });
  const applied: string[] = [];
  // The rest is applied under the lock, each checked again there (another process may have applied it since).
  for (const name of files.filter((f) => !known.has(f))) {
    const sql = await readFile(dir + name, 'utf8');
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [name]);
      if (seen.rows.length > 0) return false;
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      return true;
    });
    if (done) applied.push(name);
  }
  return applied;
}
