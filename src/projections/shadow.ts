// Shadow tables: where a projection is rebuilt while its live tables keep answering. The shadow copies of
// its tables live in a schema of their own (nomos_shadow_<name>), so the projection's unchanged SQL writes
// there when that schema comes first on the search_path. Once the shadow has seen everything the live
// tables have, one transaction moves the live tables out and the shadow ones in; the old ones are dropped
// after it commits.
import { type Db, PREPARED, type Queryable } from '../ports/db.ts';
import { type Checkpoint, compareCheckpoints, START } from '../ports/event-store.ts';
import { ASYNC_COMMIT, lockProjection, readCheckpoint, writeCheckpoint } from './checkpoints.ts';
import type { Projection } from './projection.ts';

export interface RebuildState {
  /** The version the shadow tables are built under. */
  readonly version: number;
  readonly checkpoint: Checkpoint;
  /** Events read into the shadow so far, across resumptions. */
  readonly events: number;
  /** Whether the secondary indexes exist yet (they are built once, after the bulk of the replay). */
  readonly indexed: boolean;
  readonly startedAt: string;
  readonly updatedAt: string;
}

interface RebuildRow {
  name: string;
  version: number;
  tx: number | string;
  pos: number | string;
  events: number | string;
  indexed: boolean;
  started_at: Date | string;
  updated_at: Date | string;
}

// Names come from projection code, never from input; refusing anything else keeps them safe to inline.
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function identifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`refusing ${what} ${JSON.stringify(name)}: not a plain lower-case identifier`);
  return name;
}

export const shadowSchema = (projection: Projection) => `nomos_shadow_${identifier(projection.name, 'projection name')}`;
const retiredSchema = (projection: Projection) => `nomos_retired_${identifier(projection.name, 'projection name')}`;
export const tablesOf = (projection: Projection) => projection.tables.map((t) => identifier(t, `projection ${projection.name}'s table`));

/** Serialises the writers of one projection's shadow (batches, index builds, restarts, the swap). */
export async function lockRebuild(tx: Queryable, name: string, options: { asyncCommit?: boolean } = {}): Promise<void> {
  await tx.query(`SELECT ${options.asyncCommit === true ? ASYNC_COMMIT : ''}pg_advisory_xact_lock(hashtext('projection-rebuild:' || $1))`, [name], PREPARED);
}

const REBUILD_COLUMNS = 'name, version, tx, pos, events, indexed, started_at, updated_at';

function toState(row: RebuildRow): RebuildState {
  return {
    version: Number(row.version),
    checkpoint: { tx: Number(row.tx), pos: Number(row.pos) },
    events: Number(row.events),
    indexed: row.indexed,
    startedAt: new Date(row.started_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export async function readRebuild(db: Queryable, name: string): Promise<RebuildState | null> {
  const { rows } = await db.query<RebuildRow>(`SELECT ${REBUILD_COLUMNS} FROM projection_rebuilds WHERE name = $1`, [name]);
  return rows[0] ? toState(rows[0]) : null;
}

/** Every rebuild under way, by projection name. */
export async function readRebuilds(db: Queryable): Promise<Map<string, RebuildState>> {
  const { rows } = await db.query<RebuildRow>(`SELECT ${REBUILD_COLUMNS} FROM projection_rebuilds`);
  return new Map(rows.map((row) => [row.name, toState(row)]));
}

/** Moves the shadow's checkpoint after a batch; call inside the batch's transaction. */
export async function advanceRebuild(tx: Queryable, name: string, checkpoint: Checkpoint, events: number): Promise<void> {
  await tx.query('UPDATE projection_rebuilds SET tx = $2, pos = $3, events = events + $4, updated_at = now() WHERE name = $1', [
    name,
    checkpoint.tx,
    checkpoint.pos,
    events,
  ]);
}

/** Makes the projection's SQL in this transaction resolve its tables to the shadow copies. */
export async function enterShadow(tx: Queryable, projection: Projection): Promise<void> {
  await tx.query(`SET LOCAL search_path TO ${shadowSchema(projection)}, ${await liveSchema(tx)}`);
}

/** The schema the live tables are in: the first existing one on the search_path. */
export async function liveSchema(tx: Queryable): Promise<string> {
  const { rows } = await tx.query<{ live: string | null }>('SELECT current_schema() AS live');
  return identifier(rows[0]?.live ?? '', 'live schema (the search_path names no existing schema)');
}

async function schemaExists(tx: Queryable, schema: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  return rows.length > 0;
}

/**
 * Empty copies in `schema` of the live tables: columns, defaults, generated columns, checks, primary and unique
 * keys, storage parameters; no secondary indexes (they only slow a replay). A rebuild's shadow and `nomos verify`'s
 * scratch fold are made so.
 */
export async function createTablesLike(tx: Queryable, tables: readonly string[], live: string, schema: string): Promise<void> {
  for (const table of tables) {
    await tx.query(`CREATE TABLE ${schema}.${table} (LIKE ${live}.${table} INCLUDING ALL EXCLUDING INDEXES)`);
    // LIKE leaves the table's storage parameters behind (sessions keeps room on its pages: migrations/018).
    const { rows: stored } = await tx.query<{ options: string[] | null }>('SELECT reloptions AS options FROM pg_class WHERE oid = $1::regclass', [`${live}.${table}`]);
    const options = stored[0]?.options ?? [];
    if (options.length > 0) await tx.query(`ALTER TABLE ${schema}.${table} SET (${options.join(', ')})`);
    // Keys are needed from the first event (the projections upsert on them); other indexes only slow the replay.
    const { rows } = await tx.query<{ name: string; def: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE conrelid = $1::regclass AND contype IN ('p', 'u', 'x') ORDER BY conname`,
      [`${live}.${table}`],
    );
    for (const key of rows) await tx.query(`ALTER TABLE ${schema}.${table} ADD CONSTRAINT ${identifier(key.name, 'constraint')} ${key.def}`);
  }
}

/**
 * Starts a rebuild into empty shadow tables shaped like the live ones (columns, defaults, generated columns,
 * checks, primary and unique keys, storage parameters; secondary indexes come later), or resumes the one already under way for
 * the same version. `restart` throws away a rebuild under way and begins again from the first event.
 */
export async function beginRebuild(db: Db, projection: Projection, options: { restart?: boolean } = {}): Promise<{ resumed: boolean; state: RebuildState }> {
  const shadow = shadowSchema(projection);
  const tables = tablesOf(projection);
  const resumed = await db.transaction(async (tx) => {
    await lockRebuild(tx, projection.name);
    const existing = await readRebuild(tx, projection.name);
    if (existing && existing.version === projection.version && !options.restart && (await schemaExists(tx, shadow))) return true;
    if (existing && existing.version > projection.version && !options.restart) {
      throw new Error(
        `projection ${projection.name}: a rebuild to version ${existing.version} is under way, newer than this code's ${projection.version}; ` +
          'pass restart to replace it with this version',
      );
    }
    const live = await liveSchema(tx);
    await tx.query(`DROP SCHEMA IF EXISTS ${shadow} CASCADE`);
    await tx.query(`CREATE SCHEMA ${shadow}`);
    await createTablesLike(tx, tables, live, shadow);
    await tx.query(
      `INSERT INTO projection_rebuilds (name, version, tx, pos, events, indexed, started_at, updated_at)
       VALUES ($1, $2, $3, $4, 0, false, now(), now())
       ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, tx = EXCLUDED.tx, pos = EXCLUDED.pos, events = 0,
         indexed = false, started_at = now(), updated_at = now()`,
      [projection.name, projection.version, START.tx, START.pos],
    );
    return false;
  });
  const state = await readRebuild(db, projection.name);
  if (!state) throw new Error(`projection ${projection.name}: rebuild row missing right after it was written`);
  return { resumed, state };
}

/** Creates on the shadow tables the live tables' other indexes (same names, same definitions), then analyses them. */
export async function indexShadow(db: Db, projection: Projection): Promise<void> {
  const shadow = shadowSchema(projection);
  await db.transaction(async (tx) => {
    await lockRebuild(tx, projection.name);
    const state = await readRebuild(tx, projection.name);
    if (!state || state.indexed) return;
    const live = await liveSchema(tx);
    for (const table of tablesOf(projection)) {
      const { rows } = await tx.query<{ name: string; def: string }>(
        `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def
           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE i.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
          ORDER BY c.relname`,
        [`${live}.${table}`],
      );
      for (const index of rows) await tx.query(onShadowTable(index.def, `${shadow}.${table}`));
      await tx.query(`ANALYZE ${shadow}.${table}`);
    }
    await tx.query('UPDATE projection_rebuilds SET indexed = true, updated_at = now() WHERE name = $1', [projection.name]);
  });
}

/** `CREATE INDEX name ON live.table USING …` → the same index on the shadow table. */
export function onShadowTable(indexDef: string, table: string): string {
  const parts = /^(CREATE (?:UNIQUE )?INDEX )(\S+)( ON (?:ONLY )?)\S+( USING .*)$/s.exec(indexDef);
  if (!parts) throw new Error(`cannot move index definition to the shadow table: ${indexDef}`);
  return `${parts[1]}${parts[2]}${parts[3]}${table}${parts[4]}`;
}

export type SwapOutcome = 'swapped' | 'behind' | 'unindexed' | 'gone' | 'busy';

// The swap locks the live tables one by one; a reader holding one of them while waiting for another would
// deadlock with it, and PostgreSQL would abort one of the two after deadlock_timeout (1 s by default). The
// swap gives up first, so the reader never gets an error; it is retried.
const SWAP_LOCK_TIMEOUT = '400ms';
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Swaps the shadow tables in, atomically, once they have seen everything the live ones have: the live
 * tables move to a retired schema, the shadow ones take their place, and the live checkpoint becomes the
 * shadow's under the new version. Live projector batches wait on the projection lock meanwhile, and any
 * that read the old checkpoint discard themselves. 'behind': the live tables are ahead; catch up and retry.
 */
export async function swapShadow(db: Db, projection: Projection): Promise<SwapOutcome> {
  const shadow = shadowSchema(projection);
  const retired = retiredSchema(projection);
  const swap = db.transaction(async (tx): Promise<SwapOutcome> => {
    await lockProjection(tx, projection.name);
    await lockRebuild(tx, projection.name);
    const state = await readRebuild(tx, projection.name);
    if (!state || state.version !== projection.version) return 'gone';
    if (!state.indexed) return 'unindexed';
    const current = await readCheckpoint(tx, projection.name);
    if (current && compareCheckpoints(state.checkpoint, current.checkpoint) < 0) return 'behind';
    const live = await liveSchema(tx);
    await tx.query(`SET LOCAL lock_timeout = '${SWAP_LOCK_TIMEOUT}'`);
    await tx.query(`DROP SCHEMA IF EXISTS ${retired} CASCADE`);
    await tx.query(`CREATE SCHEMA ${retired}`);
    for (const table of tablesOf(projection)) {
      await copyGrants(tx, `${live}.${table}`, `${shadow}.${table}`);
      await tx.query(`ALTER TABLE IF EXISTS ${live}.${table} SET SCHEMA ${retired}`);
      await tx.query(`ALTER TABLE ${shadow}.${table} SET SCHEMA ${live}`);
    }
    await writeCheckpoint(tx, projection.name, state.version, state.checkpoint);
    await tx.query('DELETE FROM projection_rebuilds WHERE name = $1', [projection.name]);
    await tx.query(`DROP SCHEMA ${shadow}`);
    return 'swapped';
  });
  return swap.catch((error: unknown) => {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return 'busy';
    throw error;
  });
}

const PRIVILEGES = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']);

/**
 * Grants on the live table (say, SELECT for an auditors' role that queries the read models directly) carry
 * over to its replacement, as they stood at the swap.
 */
async function copyGrants(tx: Queryable, from: string, to: string): Promise<void> {
  const { rows } = await tx.query<{ privilege: string; grantee: string; grantable: boolean }>(
    `SELECT a.privilege_type AS privilege, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS grantee,
            a.is_grantable AS grantable
       FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
      WHERE c.oid = to_regclass($1) AND a.grantee <> c.relowner`,
    [from],
  );
  for (const grant of rows) {
    if (!PRIVILEGES.has(grant.privilege)) continue;
    await tx.query(`GRANT ${grant.privilege} ON ${to} TO ${grant.grantee}${grant.grantable ? ' WITH GRANT OPTION' : ''}`);
  }
}

/** Drops the tables a swap retired (also those left by a process that died right after its swap). */
export async function dropRetired(db: Db, projection: Projection): Promise<void> {
  await db.query(`DROP SCHEMA IF EXISTS ${retiredSchema(projection)} CASCADE`);
}
