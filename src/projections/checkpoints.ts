// The projection_checkpoints table: where each projection stands and under which version its rows were
// written, plus the per-projection advisory lock that serialises every writer of those rows.
import { type Db, PREPARED, type Queryable } from '../ports/db.ts';
import { type Checkpoint, START } from '../ports/event-store.ts';
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
  const { rows } = await db.query<CheckpointRow>('SELECT version, tx, pos, updated_at FROM projection_checkpoints WHERE name = $1', [name], PREPARED);
  const row = rows[0];
  if (!row) return null;
  return {
    version: Number(row.version),
    checkpoint: { tx: Number(row.tx), pos: Number(row.pos) },
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/**
 * SET LOCAL synchronous_commit = off as an expression, so a statement the transaction runs anyway carries it:
 * the transaction then commits without waiting for the WAL flush.
 */
const SYNC_COMMIT_OFF = "set_config('synchronous_commit', 'off', true)";

/** Select-list prefix for a lock's statement that also turns off synchronous commit (SYNC_COMMIT_OFF). */
export const ASYNC_COMMIT = `${SYNC_COMMIT_OFF}, `;

/**
 * Serialises the projector's batches and resets of one projection across processes until the transaction
 * ends. Take it in its own statement: under READ COMMITTED the next statement's snapshot then sees what the
 * previous holder committed.
 */
export async function lockProjection(tx: Queryable, name: string, options: { asyncCommit?: boolean } = {}): Promise<void> {
  await tx.query(`SELECT ${options.asyncCommit === true ? ASYNC_COMMIT : ''}pg_advisory_xact_lock(hashtext('projection:' || $1))`, [name], PREPARED);
}

export async function writeCheckpoint(tx: Queryable, name: string, version: number, checkpoint: Checkpoint): Promise<void> {
  await tx.query(
    `INSERT INTO projection_checkpoints (name, version, tx, pos, updated_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, tx = EXCLUDED.tx, pos = EXCLUDED.pos, updated_at = now()`,
    [name, version, checkpoint.tx, checkpoint.pos],
    PREPARED,
  );
}

/**
 * Moves the checkpoint from `from` to `to` if it stands at `from` under the same version, in one statement;
 * true when it moved. For events the projection has nothing to apply for: no row of its tables changes, so it
 * needs neither a transaction nor the lock. A batch or a reset that got there first has moved it (this matches
 * nothing), or moves it again after this commits (a reset) or past it (a batch, from the same place). The
 * commit need not wait for the WAL flush: a lost move only makes the projection read those events again.
 */
export async function moveCheckpoint(db: Queryable, name: string, from: { version: number; checkpoint: Checkpoint }, to: Checkpoint): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE projection_checkpoints SET tx = $5, pos = $6, updated_at = now()
     FROM (SELECT ${SYNC_COMMIT_OFF}) async_commit
     WHERE name = $1 AND version = $2 AND tx = $3 AND pos = $4
     RETURNING 1`,
    [name, from.version, from.checkpoint.tx, from.checkpoint.pos, to.tx, to.pos],
    PREPARED,
  );
  return rows.length > 0;
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
