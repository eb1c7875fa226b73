// The projection_checkpoints table: where each projection stands and under which version its rows were
// written, plus the per-projection advisory lock that serialises every writer of those rows.
import type { Db, Queryable } from '../adapters/db/db.ts';
import { type Checkpoint, START } from '../commands/event-store.ts';
import type { Projection } from './projection.ts';

export interface StoredCheckpoint {
  readonly version: number;
  readonly checkpoint: Checkpoint;
  readonly updatedAt: string;
}

interface CheckpointRow {
  version: number;
  tx: number | string;
  pos: number | string;
  updated_at: Date | string;
}

/** The stored checkpoint of a projection, or null when it has never been registered. */
export async function readCheckpoint(db: Queryable, name: string): Promise<StoredCheckpoint | null> {
  const { rows } = await db.query<CheckpointRow>('SELECT version, tx, pos, updated_at FROM projection_checkpoints WHERE name = $1', [name]);
  const row = rows[0];
  if (!row) return null;
  return {
    version: Number(row.version),
    checkpoint: { tx: Number(row.tx), pos: Number(row.pos) },
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/**
 * Serialises the projector's batches and resets of one projection across processes until the transaction
 * ends. Take it in its own statement: under READ COMMITTED the next statement's snapshot then sees what the
 * previous holder committed.
 */
export async function lockProjection(tx: Queryable, name: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('projection:' || $1))", [name]);
}

export async function writeCheckpoint(tx: Queryable, name: string, version: number, checkpoint: Checkpoint): Promise<void> {
  await tx.query(
    `INSERT INTO projection_checkpoints (name, version, tx, pos, updated_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, tx = EXCLUDED.tx, pos = EXCLUDED.pos, updated_at = now()`,
    [name, version, checkpoint.tx, checkpoint.pos],
  );
}

/** Registers the projection at START if it has no row; reports a stored version that differs from the code's. */
export async function ensureCheckpoint(db: Queryable, projection: Projection): Promise<{ versionChanged: boolean }> {
  await db.query('INSERT INTO projection_checkpoints (name, version, tx, pos) VALUES ($1, $2, 0, 0) ON CONFLICT (name) DO NOTHING', [
    projection.name,
    projection.version,
  ]);
  const stored = await readCheckpoint(db, projection.name);
  return { versionChanged: stored !== null && stored.version !== projection.version };
}

/**
 * SQL for the position every projection named in the text[] parameter `names` has reached (0 while one is not
 * registered yet): a scalar a query can carry, so its rows and the position it reports share one snapshot.
 */
export const livePositionSql = (names: string): string =>
  `(SELECT CASE WHEN count(*) = cardinality(${names}::text[]) THEN coalesce(min(pos), 0) ELSE 0 END FROM projection_checkpoints WHERE name = ANY(${names}::text[]))`;

// Table names come from projection code, never from input; refusing anything else keeps them safe to inline.
const TABLE_NAME = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * Empties the projection's tables and moves its checkpoint to START under the current version, atomically:
 * a batch that read the old checkpoint finds it moved and discards itself. DELETE rather than TRUNCATE so
 * readers keep seeing the old rows until the reset commits.
 */
export async function resetProjection(db: Db, projection: Projection): Promise<void> {
  for (const table of projection.tables) {
    if (!TABLE_NAME.test(table)) throw new Error(`projection ${projection.name}: refusing table name ${JSON.stringify(table)}`);
  }
  await db.transaction(async (tx) => {
    await lockProjection(tx, projection.name);
    for (const table of projection.tables) await tx.query(`DELETE FROM ${table}`);
    await writeCheckpoint(tx, projection.name, projection.version, START);
  });
}
