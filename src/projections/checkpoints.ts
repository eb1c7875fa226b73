// The projection_checkpoints table: where each projection stands and under which version its rows were
// written, plus the per-projection advisory lock that serialises every writer of those rows.
import { type Db, PREPARED, type Queryable, type Statement, type Transaction } from '../ports/db.ts';
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

const stored = (row: CheckpointRow): StoredCheckpoint => ({
  version: Number(row.version),
  checkpoint: { tx: Number(row.tx), pos: Number(row.pos) },
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** Every stored checkpoint, by projection name, in one statement. */
export async function readCheckpoints(db: Queryable): Promise<Map<string, StoredCheckpoint>> {
  const { rows } = await db.query(READ_CHECKPOINTS.sql, [], PREPARED);
  return checkpointsOf(rows);
}

/** The stored checkpoint of a projection, or null when it has never been registered. */
export async function readCheckpoint(db: Queryable, name: string): Promise<StoredCheckpoint | null> {
  const { rows } = await db.query<CheckpointRow>('SELECT version, tx, pos, updated_at FROM projection_checkpoints WHERE name = $1', [name], PREPARED);
  const row = rows[0];
  return row ? stored(row) : null;
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

/**
 * lockProjection for several projections in one statement (for a transaction's opening), taken in name order so
 * that two holders of overlapping sets cannot deadlock; also turns off synchronous commit. The rows the locks
 * guard are read by the transaction's next statement.
 */
export function lockProjections(names: readonly string[]): Statement {
  return {
    sql: `SELECT ${ASYNC_COMMIT}count(pg_advisory_xact_lock(hashtext('projection:' || n))) FROM unnest($1::text[]) AS n`,
    params: [[...names].sort()],
    options: PREPARED,
  };
}

/**
 * A statement (for a transaction's opening, after the locks) that fails (nomos_expect, migrations/019) unless
 * each of these projections stands exactly where given: the check applyInside makes on READ_CHECKPOINTS' rows,
 * for a transaction that commits without waiting for them.
 */
export function expectPlaces(places: readonly { name: string; version: number; checkpoint: Checkpoint }[]): Statement {
  return {
    sql: `SELECT nomos_expect((SELECT count(*) FROM projection_checkpoints c
             JOIN unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) AS p(name, version, tx, pos)
               ON c.name = p.name AND c.version = p.version AND c.tx = p.tx AND c.pos = p.pos) = cardinality($1::text[]),
           'a projection moved') AS expected`,
    params: [places.map((p) => p.name), places.map((p) => p.version), places.map((p) => p.checkpoint.tx), places.map((p) => p.checkpoint.pos)],
    options: PREPARED,
  };
}

/** readCheckpoints as a statement (for a transaction's opening); checkpointsOf reads its rows. */
export const READ_CHECKPOINTS: Statement = { sql: 'SELECT name, version, tx, pos, updated_at FROM projection_checkpoints', options: PREPARED };

/** The rows of READ_CHECKPOINTS, by projection name. */
export const checkpointsOf = (rows: readonly Record<string, unknown>[]): Map<string, StoredCheckpoint> =>
  new Map(rows.map((row) => [String(row.name), stored(row as unknown as CheckpointRow)]));

/** writeCheckpoint for several projections in one statement. */
export function writeCheckpoints(tx: Transaction, entries: readonly { name: string; version: number; checkpoint: Checkpoint }[]): void {
  tx.send(
    `INSERT INTO projection_checkpoints (name, version, tx, pos, updated_at)
     SELECT name, version, tx, pos, now() FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) AS c(name, version, tx, pos)
     ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, tx = EXCLUDED.tx, pos = EXCLUDED.pos, updated_at = now()`,
    [entries.map((e) => e.name), entries.map((e) => e.version), entries.map((e) => e.checkpoint.tx), entries.map((e) => e.checkpoint.pos)],
    PREPARED,
  );
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
 * Moves the checkpoint from `from` to `to` if it stands at `from` under the same version, in one statement
 * (shared with the other moves asked for at the same time); true when it moved. For events the projection has
 * nothing to apply for: no row of its tables changes, so it needs neither a transaction nor the lock. A batch or
 * a reset that got there first has moved it (this matches nothing), or moves it again after this commits (a
 * reset) or past it (a batch, from the same place). The
 * commit need not wait for the WAL flush: a lost move only makes the projection read those events again.
 */
export function moveCheckpoint(db: Queryable, name: string, from: { version: number; checkpoint: Checkpoint }, to: Checkpoint): Promise<boolean> {
  return movesOf(db).move({ name, version: from.version, from: from.checkpoint, to });
}

interface Move {
  readonly name: string;
  readonly version: number;
  readonly from: Checkpoint;
  readonly to: Checkpoint;
}

/**
 * The moves asked for in one turn of the event loop go as one statement: after an append every projector
 * with nothing to apply skips at once, and each skip on its own was a statement per projector per command.
 * Each row is checked on its own, so one that stands elsewhere fails alone; a failed statement is tried again
 * a move at a time, so that an error is its own move's.
 */
class CheckpointMoves {
  private queued: Array<{ move: Move; resolve: (moved: boolean) => void; reject: (error: unknown) => void }> = [];

  constructor(private readonly db: Queryable) {}

  move(move: Move): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => void this.flush());
      this.queued.push({ move, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    // A projection moved twice at once (two projectors of it in one process) goes once per statement: one
    // statement's rows cannot tell which of the two moved it.
    const names = new Set<string>();
    const batch = this.queued.filter((b) => !names.has(b.move.name) && names.add(b.move.name));
    const later = this.queued.filter((b) => !batch.includes(b));
    this.queued = later;
    if (later.length > 0) setImmediate(() => void this.flush());
    if (batch.length === 1) {
      const [only] = batch;
      await this.run([only!.move]).then((moved) => only!.resolve(moved.has(only!.move.name)), only!.reject);
      return;
    }
    try {
      const moved = await this.run(batch.map((b) => b.move));
      for (const b of batch) b.resolve(moved.has(b.move.name));
    } catch {
      for (const b of batch) await this.run([b.move]).then((moved) => b.resolve(moved.has(b.move.name)), b.reject);
    }
  }

  /** The names of the projections whose checkpoint moved. */
  private async run(moves: readonly Move[]): Promise<Set<string>> {
    const { rows } = await this.db.query<{ name: string }>(
      `UPDATE projection_checkpoints c SET tx = m.to_tx, pos = m.to_pos, updated_at = now()
       FROM (SELECT ${SYNC_COMMIT_OFF}) async_commit,
            unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[]) AS m(name, version, tx, pos, to_tx, to_pos)
       WHERE c.name = m.name AND c.version = m.version AND c.tx = m.tx AND c.pos = m.pos
       RETURNING c.name`,
      [moves.map((m) => m.name), moves.map((m) => m.version), moves.map((m) => m.from.tx), moves.map((m) => m.from.pos), moves.map((m) => m.to.tx), moves.map((m) => m.to.pos)],
      PREPARED,
    );
    return new Set(rows.map((r) => r.name));
  }
}

const moves = new WeakMap<Queryable, CheckpointMoves>();

function movesOf(db: Queryable): CheckpointMoves {
  let shared = moves.get(db);
  if (!shared) moves.set(db, (shared = new CheckpointMoves(db)));
  return shared;
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
