// Wires the parts for one process: the read-model database (PostgreSQL or embedded PGlite), the event store
// (the same database, or EventStoreDB), migrations, and the projections with their projectors.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { Db } from './adapters/db/db.ts';
import { migrate } from './adapters/db/migrate.ts';
import { pgliteDb } from './adapters/db/pglite.ts';
import { postgresDb } from './adapters/db/postgres.ts';
import { EsdbEventStore } from './adapters/eventstore/esdb.ts';
import { SqlEventStore } from './adapters/eventstore/sql.ts';
import type { CommandDeps } from './commands/session.ts';
import type { EventStore } from './commands/event-store.ts';
import type { Config } from './config.ts';
import type { Projection } from './projections/projection.ts';
import { Projector, ensureCheckpoint, resetProjection } from './projections/projector.ts';
import { plansProjection } from './projections/plans.ts';
import { sessionsProjection } from './projections/sessions.ts';
import { transcriptProjection } from './projections/transcript.ts';

export const projections: readonly Projection[] = [sessionsProjection, transcriptProjection, plansProjection];

export interface Runtime {
  readonly db: Db;
  readonly store: EventStore;
  readonly projections: readonly Projection[];
  readonly commandDeps: CommandDeps;
  readonly description: { eventStore: string; readModels: string };
  startProjectors(onError?: (projection: string, error: unknown) => void): void;
  close(): Promise<void>;
}

export async function openDb(config: Config): Promise<Db> {
  if (config.databaseUrl) return postgresDb(config.databaseUrl);
  await mkdir(config.dataDir, { recursive: true });
  return pgliteDb(config.dataDir);
}

/** Opens everything from configuration; `db` may be given (tests pass a fresh one). */
export async function openRuntime(config: Config, given?: { db?: Db; clock?: () => Date }): Promise<Runtime> {
  const db = given?.db ?? (await openDb(config));
  await migrate(db);
  const store: EventStore = config.eventStoreUrl ? new EsdbEventStore(config.eventStoreUrl) : new SqlEventStore(db);
  // A projection whose version changed is rebuilt from the first event.
  for (const projection of projections) {
    const { versionChanged } = await ensureCheckpoint(db, projection);
    if (versionChanged) await resetProjection(db, projection);
  }
  const projectors: Projector[] = [];
  return {
    db,
    store,
    projections,
    commandDeps: { store, readDb: db, clock: given?.clock ?? (() => new Date()), newId: randomUUID },
    description: {
      eventStore: config.eventStoreUrl ? 'eventstoredb' : db.kind,
      readModels: db.kind === 'pglite' ? `pglite (${config.dataDir})` : 'postgres',
    },
    startProjectors(onError) {
      for (const projection of projections) {
        const projector = new Projector({ store, db }, projection, { onError: (error) => onError?.(projection.name, error) });
        projector.start();
        projectors.push(projector);
      }
    },
    async close() {
      await Promise.all(projectors.map((p) => p.stop()));
      await store.close();
      if (!given?.db) await db.close();
    },
  };
}
