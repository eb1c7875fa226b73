// `nomos verify`'s check of the read models: each projection folded again from the first event, into scratch
// tables shaped like its live ones, up to exactly the event its live tables have reached, then compared with them
// row for row (a digest of each table on each side; where they differ, the key and the column). A read-model row
// someone edited, added or removed by hand is named by projection, table, key and column.
import type { Db, Queryable } from '../ports/db.ts';
import { type Checkpoint, compareCheckpoints, type EventStore, type ProjectedEvent, START } from '../ports/event-store.ts';
import { readCheckpoint } from './checkpoints.ts';
import type { Projection } from './projection.ts';
import { createTablesLike, liveSchema, tablesOf } from './shadow.ts';

export interface RowDifference {
  readonly table: string;
  /** The row's primary key, column by column. */
  readonly key: Record<string, unknown>;
  /** The column that differs; null when the row is on one side only. */
  readonly column: string | null;
  /** The read model's value (its row, when column is null; null when the row is missing there). */
  readonly live: unknown;
  /** The fold's. */
  readonly fold: unknown;
}

export interface FoldReport {
  readonly projection: string;
  readonly ok: boolean;
  /** Why it could not be compared (another version's rows), or null. */
  readonly skipped: string | null;
  readonly events: number;
  readonly tables: readonly { readonly table: string; readonly rows: number; readonly live: string; readonly fold: string }[];
  readonly differences: readonly RowDifference[];
}

const PAGE = 5_000;
const SHOWN = 20;
const TRIES = 5;

const scratchSchema = (projection: Projection) => `nomos_verify_${projection.name.replace(/[^a-z0-9_]/g, '_')}`;

interface Column {
  readonly name: string;
  readonly type: string;
}

async function columnsOf(db: Queryable, table: string): Promise<{ columns: Column[]; key: string[] }> {
  const { rows } = await db.query<{ name: string; type: string; key: boolean }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
            COALESCE(a.attnum = ANY (i.indkey), false) AS key
       FROM pg_attribute a LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [table],
  );
  return { columns: rows.map((r) => ({ name: r.name, type: r.type })), key: rows.filter((r) => r.key).map((r) => r.name) };
}

/** A select list that every side compares alike: json as jsonb (json has no equality). */
const comparable = (columns: readonly Column[]) => columns.map((c) => (c.type === 'json' ? `"${c.name}"::jsonb AS "${c.name}"` : `"${c.name}"`)).join(', ');

/** Folds `projection` into its scratch tables from the first event up to `upTo`, from `after`. Returns events applied. */
async function foldInto(db: Db, store: EventStore, projection: Projection, schema: string, live: string, after: Checkpoint, upTo: Checkpoint): Promise<{ events: number; reached: Checkpoint }> {
  let at = after;
  let applied = 0;
  for (;;) {
    const page = await store.readAllProjected({ after: at, limit: PAGE });
    const within = page.events.filter((e) => compareCheckpoints(e.checkpoint, upTo) <= 0);
    const handled: ProjectedEvent[] = within.filter((e) => projection.handles.has(e.type));
    if (handled.length > 0) {
      await db.transaction(async (tx) => {
        await tx.query(`SET LOCAL search_path TO ${schema}, ${live}`);
        await projection.applyBatch(tx, handled);
      });
    }
    applied += handled.length;
    if (within.length > 0) at = within.at(-1)!.checkpoint;
    if (within.length < page.events.length || page.events.length < PAGE) return { events: applied, reached: at };
  }
}

async function compareTable(tx: Queryable, table: string, live: string, schema: string): Promise<{ digest: { table: string; rows: number; live: string; fold: string }; differences: RowDifference[] }> {
  const { columns, key } = await columnsOf(tx, `${live}.${table}`);
  const list = comparable(columns);
  const digest = async (from: string) => {
    const { rows } = await tx.query<{ n: string; digest: string | null }>(
      `SELECT count(*) AS n, md5(string_agg(r::text, E'\\n' ORDER BY r::text)) AS digest FROM (SELECT ${list} FROM ${from}.${table}) r`,
    );
    return { rows: Number(rows[0]?.n ?? 0), digest: rows[0]?.digest ?? 'empty' };
  };
  const [l, f] = [await digest(live), await digest(schema)];
  const summary = { table, rows: l.rows, live: l.digest, fold: f.digest };
  if (l.digest === f.digest) return { digest: summary, differences: [] };
  const only = async (a: string, b: string) =>
    (await tx.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(d) AS row FROM (SELECT ${list} FROM ${a}.${table} EXCEPT ALL SELECT ${list} FROM ${b}.${table}) d LIMIT ${SHOWN}`)).rows.map((r) => r.row);
  const [liveOnly, foldOnly] = [await only(live, schema), await only(schema, live)];
  const keyOf = (row: Record<string, unknown>) => Object.fromEntries(key.map((k) => [k, row[k]]));
  const keyText = (row: Record<string, unknown>) => JSON.stringify(key.map((k) => row[k]));
  const differences: RowDifference[] = [];
  const folded = new Map(foldOnly.map((row) => [keyText(row), row]));
  for (const row of liveOnly) {
    const other = key.length > 0 ? folded.get(keyText(row)) : undefined;
    if (!other) {
      differences.push({ table, key: keyOf(row), column: null, live: row, fold: null });
      continue;
    }
    folded.delete(keyText(row));
    for (const c of columns) {
      if (JSON.stringify(row[c.name]) !== JSON.stringify(other[c.name])) differences.push({ table, key: keyOf(row), column: c.name, live: row[c.name], fold: other[c.name] });
    }
  }
  for (const row of folded.values()) differences.push({ table, key: keyOf(row), column: null, live: null, fold: row });
  return { digest: summary, differences };
}

/** Folds and compares one projection; its scratch tables are dropped afterwards, whatever happens. */
export async function checkFold(db: Db, store: EventStore, projection: Projection): Promise<FoldReport> {
  const stored = await readCheckpoint(db, projection.name);
  const none = { events: 0, tables: [], differences: [] };
  if (!stored) return { projection: projection.name, ok: false, skipped: 'never projected here', ...none };
  if (stored.version !== projection.version) return { projection: projection.name, ok: false, skipped: `its rows are version ${stored.version}, this code folds version ${projection.version}: rebuild it first`, ...none };
  const schema = scratchSchema(projection);
  const live = await liveSchema(db);
  const tables = tablesOf(projection);
  await db.transaction(async (tx) => {
    await tx.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await tx.query(`CREATE SCHEMA ${schema}`);
    await createTablesLike(tx, tables, live, schema);
  });
  try {
    let at: Checkpoint = START;
    let events = 0;
    // The live tables may move on while we fold (a server is running): fold up to where they stand, then compare
    // in one snapshot that finds them still there; otherwise fold on and look again.
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const target = (await readCheckpoint(db, projection.name))?.checkpoint ?? START;
      const folded = await foldInto(db, store, projection, schema, live, at, target);
      events += folded.events;
      at = folded.reached;
      const result = await db.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        const now = (await readCheckpoint(tx, projection.name))?.checkpoint ?? START;
        if (compareCheckpoints(now, target) !== 0) return null;
        const compared = [];
        for (const table of tables) compared.push(await compareTable(tx, table, live, schema));
        return compared;
      });
      if (result) {
        const differences = result.flatMap((r) => r.differences);
        return { projection: projection.name, ok: differences.length === 0, skipped: null, events, tables: result.map((r) => r.digest), differences };
      }
    }
    return { projection: projection.name, ok: false, skipped: `its live tables kept moving (${TRIES} tries): run it on a quieter log`, ...none };
  } finally {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}
