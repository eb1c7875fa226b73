// The database of a configuration: PostgreSQL when a URL is given, else the embedded PGlite in its data directory.
import { mkdir } from 'node:fs/promises';
import type { Db } from '../../ports/db.ts';
import { pgliteDb } from './pglite.ts';
import { postgresDb } from './postgres.ts';

export async function openDb(config: { readonly databaseUrl: string | null; readonly dataDir: string }): Promise<Db> {
  if (config.databaseUrl) return postgresDb(config.databaseUrl);
  await mkdir(config.dataDir, { recursive: true });
  return pgliteDb(config.dataDir);
}
