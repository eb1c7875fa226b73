// The database of a configuration: PostgreSQL when a URL is given, else the embedded PGlite in its data directory.
// Each adapter is loaded only when chosen: a server on one back end does not load the other's driver at start.
import { mkdir } from 'node:fs/promises';
import type { Db } from '../../ports/db.ts';

export async function openDb(config: { readonly databaseUrl: string | null; readonly dataDir: string }): Promise<Db> {
  if (config.databaseUrl) return (await import('./postgres.ts')).postgresDb(config.databaseUrl);
  await mkdir(config.dataDir, { recursive: true });
  return (await import('./pglite.ts')).pgliteDb(config.dataDir);
}
