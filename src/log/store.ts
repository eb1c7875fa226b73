// The verifiable log's tables (migrations/030): the seal's state, the tree's complete nodes, which event each
// leaf is, and the signed checkpoints. Hashes cross SQL as hex text, which PostgreSQL and PGlite read and write alike.
import type { Db, Queryable, Transaction } from '../ports/db.ts';
import type { LeafColumns, LeafEvent, Redaction } from './leaf.ts';
import { type Hash, type NodeId, type NodeSource, nodeSource } from './merkle.ts';

export interface SealState {
  readonly size: number;
  readonly lastPosition: number;
  readonly origin: string;
  /** The sealing key's public half, SPKI PEM. */
  readonly publicKey: string;
  readonly sealedAt: Date;
}

export interface StoredCheckpoint {
  readonly treeSize: number;
  readonly root: Hash;
  readonly note: string;
  readonly signedAt: Date;
}

export async function sealState(db: Queryable): Promise<SealState | null> {
  const { rows } = await db.query<{ size: string; last_position: string; origin: string; public_key: string; sealed_at: Date | string }>(
    'SELECT size, last_position, origin, public_key, sealed_at FROM log_seal',
  );
  const row = rows[0];
  return row ? { size: Number(row.size), lastPosition: Number(row.last_position), origin: row.origin, publicKey: row.public_key, sealedAt: new Date(row.sealed_at) } : null;
}

/** The first sealer's claim on the log: its origin and key. Returns the state as it stands (another may have been first). */
export async function claimSeal(db: Queryable, origin: string, publicKey: string): Promise<SealState> {
  await db.query('INSERT INTO log_seal (size, last_position, origin, public_key) VALUES (0, 0, $1, $2) ON CONFLICT (one) DO NOTHING', [origin, publicKey]);
  const state = await sealState(db);
  if (!state) throw new Error('log_seal has no row after claiming it');
  return state;
}

/** The hashes of the given complete nodes, as a lookup that names a node the table lacks. */
export async function readNodes(db: Queryable, ids: readonly NodeId[]): Promise<NodeSource> {
  if (ids.length === 0) return nodeSource([]);
  const { rows } = await db.query<{ level: number; idx: string; hash: string }>(
    `SELECT n.level, n.idx, encode(n.hash, 'hex') AS hash FROM log_nodes n
     JOIN unnest($1::smallint[], $2::bigint[]) AS w(level, idx) ON n.level = w.level AND n.idx = w.idx`,
    [ids.map((i) => i.level), ids.map((i) => i.index)],
  );
  return nodeSource(rows.map((r) => ({ level: Number(r.level), index: Number(r.idx), hash: Buffer.from(r.hash, 'hex') })));
}

/**
 * The highest position no append still open can take a number below: the sequence's last number, and the
 * appenders running after it was read (transactions holding `events` in ROW EXCLUSIVE mode in this database, by
 * xid: not its readers, nor autovacuum's ANALYZE of it). An appender has its xid and that lock before it takes a
 * position (an INSERT locks its table before it produces a row), so once those transactions have ended
 * (settled), every position up to `position` is committed or never will be. Not a snapshot's xmax: that is the
 * last completed xid plus one, and an appender that started before a transaction that already completed can hold
 * an xid at or above it (sealed past an append still open, 3 rounds in 40 under load: test/log/sealer.test.ts).
 */
export async function horizon(db: Queryable): Promise<{ position: number; appenders: string[] }> {
  const drawn = await db.query<{ position: string }>('SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS position FROM events_global_position_seq');
  const running = await db.query<{ xid: string }>(
    `SELECT DISTINCT t.transactionid::text AS xid FROM pg_locks t
       JOIN pg_locks r ON r.pid = t.pid AND r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'
        AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      WHERE t.locktype = 'transactionid' AND t.granted AND t.pid <> pg_backend_pid()`,
  );
  return { position: Number(drawn.rows[0]!.position), appenders: running.rows.map((r) => r.xid) };
}

/** Whether every appender `horizon` saw has ended (its xid's lock is released when it commits or rolls back). */
export async function settled(db: Queryable, appenders: readonly string[]): Promise<boolean> {
  if (appenders.length === 0) return true;
  const { rows } = await db.query<{ running: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'transactionid' AND transactionid::text = ANY($1::text[])) AS running", [appenders]);
  return rows[0]?.running === false;
}

interface EventRow {
  position: string;
  stream_name: string;
  stream_position: string;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: string;
  redacted_at: string | null;
  redacted_sha: string | null;
  redacted_by: unknown;
  redacted_reason: string | null;
}

/** A timestamp column as a leaf writes it: UTC with microseconds, as PostgreSQL and PGlite both write it. */
const leafTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * An event's columns for its leaf, `e` the event, with its first redaction if it had one (migrations/032).
 */
const EVENT_COLUMNS = `e.global_position AS position, e.stream_name, e.stream_position, e.type,
  e.data, e.metadata, ${leafTime('e.recorded_at')} AS recorded_at,
  red.redacted_at, red.redacted_sha, red.redacted_by, red.redacted_reason`;
const REDACTION_JOIN = `LEFT JOIN LATERAL (
    SELECT r.global_position AS redacted_at, r.data->>'data_sha256' AS redacted_sha, r.metadata->'actor' AS redacted_by, r.data->>'reason' AS redacted_reason
      FROM events r WHERE r.type = 'PayloadRedacted' AND (r.data->>'position')::bigint = e.global_position
     ORDER BY r.global_position LIMIT 1) red ON true`;

function leafEvent(r: EventRow): LeafEvent {
  const event = { position: Number(r.position), stream: r.stream_name, version: Number(r.stream_position), type: r.type, recordedAt: r.recorded_at, metadata: r.metadata, data: r.data };
  if (r.redacted_at === null || r.redacted_sha === null) return event;
  return { ...event, redaction: { position: Number(r.redacted_at), dataSha256: r.redacted_sha, actor: r.redacted_by, reason: r.redacted_reason ?? '' } };
}

/**
 * The committed events after `after` up to `upTo`, in position order, at most `limit`. The page is taken by the
 * lower bound alone and `upTo` applied outside it: with both bounds in one WHERE, a table whose statistics lag a
 * bulk load is planned as a bitmap scan of everything past `after` and a sort, every page (100 000 events read
 * eight times slower).
 */
export async function eventsBetween(db: Queryable, after: number, upTo: number, limit: number): Promise<LeafEvent[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM (SELECT * FROM events WHERE global_position > $1 ORDER BY global_position LIMIT $3) e ${REDACTION_JOIN}
      WHERE e.global_position <= $2 ORDER BY e.global_position`,
    [after, upTo, limit],
  );
  return rows.map(leafEvent);
}

/**
 * Every redacted event's first redaction, by the redacted event's position: read once for a walk over the whole
 * log (a lateral probe per event is a third of reading it), from the partial index migrations/032 made for it.
 */
export async function allRedactions(db: Queryable): Promise<Map<number, Redaction>> {
  const { rows } = await db.query<{ target: string; position: string; sha: string | null; actor: unknown; reason: string | null }>(
    `SELECT DISTINCT ON ((data->>'position')::bigint) (data->>'position')::bigint AS target, global_position AS position,
            data->>'data_sha256' AS sha, metadata->'actor' AS actor, data->>'reason' AS reason
       FROM events WHERE type = 'PayloadRedacted' ORDER BY (data->>'position')::bigint, global_position`,
  );
  const found = new Map<number, Redaction>();
  for (const r of rows) if (r.sha !== null) found.set(Number(r.target), { position: Number(r.position), dataSha256: r.sha, actor: r.actor, reason: r.reason ?? '' });
  return found;
}

interface RawEventRow {
  position: string;
  stream_name: string;
  stream_position: string;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

/**
 * The committed events after `after`, at most `limit`, in position order, as columns with their JSON unparsed and
 * their redactions (allRedactions). (One row a page, each column aggregated into a text, was tried: three times
 * slower, in PostgreSQL's string_agg and in the driver's handling of one large message.)
 */
export async function eventColumnsAfter(db: Queryable, after: number, limit: number, redactions: ReadonlyMap<number, Redaction>): Promise<LeafColumns> {
  const { rows } = await db.query<RawEventRow>(
    `SELECT global_position AS position, stream_name, stream_position, type, data::text AS data, metadata::text AS metadata,
            ${leafTime('recorded_at')} AS recorded_at
       FROM events WHERE global_position > $1 ORDER BY global_position LIMIT $2`,
    [after, limit],
  );
  const n = rows.length;
  const columns: LeafColumns = { positions: new Float64Array(n), versions: new Float64Array(n), streams: [], types: [], recordedAt: [], metadata: [], data: [], redactedSha: [] };
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    const position = Number(r.position);
    columns.positions[i] = position;
    columns.versions[i] = Number(r.stream_position);
    columns.streams.push(r.stream_name);
    columns.types.push(r.type);
    columns.recordedAt.push(r.recorded_at);
    columns.metadata.push(r.metadata);
    columns.data.push(r.data);
    columns.redactedSha.push(redactions.get(position)?.dataSha256 ?? null);
  }
  return columns;
}

/** The event at a position and its leaf index, or null when no sealed leaf is that event. */
export async function sealedEvent(db: Queryable, position: number): Promise<{ leafIndex: number; event: LeafEvent } | null> {
  const { rows } = await db.query<EventRow & { leaf_index: string }>(
    `SELECT l.leaf_index, ${EVENT_COLUMNS} FROM log_leaves l JOIN events e ON e.global_position = l.position ${REDACTION_JOIN} WHERE l.position = $1`,
    [position],
  );
  const row = rows[0];
  return row ? { leafIndex: Number(row.leaf_index), event: leafEvent(row) } : null;
}

export interface SealedBatch {
  readonly fromSize: number;
  readonly toSize: number;
  readonly lastPosition: number;
  readonly leaves: readonly { readonly index: number; readonly position: number }[];
  readonly nodes: readonly { readonly level: number; readonly index: number; readonly hash: Hash }[];
  readonly checkpoint: { readonly root: Hash; readonly note: string } | null;
}

/** Thrown when the seal moved under a batch: another sealer wrote it (this one lost its lease); nothing was written. */
export class SealMoved extends Error {}

/** Writes one batch in one transaction, only if the seal still stands where the batch began. */
export async function writeBatch(db: Db, batch: SealedBatch): Promise<void> {
  await db.transaction(async (tx: Transaction) => {
    const { rows } = await tx.query('UPDATE log_seal SET size = $1, last_position = $2, sealed_at = now() WHERE size = $3 RETURNING size', [batch.toSize, batch.lastPosition, batch.fromSize]);
    if (rows.length !== 1) throw new SealMoved(`the log's seal is no longer at size ${batch.fromSize}: another server sealed meanwhile`);
    if (batch.leaves.length > 0) {
      tx.send('INSERT INTO log_leaves (leaf_index, position) SELECT * FROM unnest($1::bigint[], $2::bigint[])', [batch.leaves.map((l) => l.index), batch.leaves.map((l) => l.position)]);
    }
    if (batch.nodes.length > 0) {
      tx.send("INSERT INTO log_nodes (level, idx, hash) SELECT l, i, decode(h, 'hex') FROM unnest($1::smallint[], $2::bigint[], $3::text[]) AS n(l, i, h)", [
        batch.nodes.map((n) => n.level),
        batch.nodes.map((n) => n.index),
        batch.nodes.map((n) => n.hash.toString('hex')),
      ]);
    }
    if (batch.checkpoint) {
      tx.send("INSERT INTO log_checkpoints (tree_size, root, note) VALUES ($1, decode($2, 'hex'), $3)", [batch.toSize, batch.checkpoint.root.toString('hex'), batch.checkpoint.note]);
    }
  });
}

interface CheckpointRow {
  tree_size: string;
  root: string;
  note: string;
  signed_at: Date | string;
}

const checkpointOf = (r: CheckpointRow): StoredCheckpoint => ({ treeSize: Number(r.tree_size), root: Buffer.from(r.root, 'hex'), note: r.note, signedAt: new Date(r.signed_at) });
const CHECKPOINT_COLUMNS = "tree_size, encode(root, 'hex') AS root, note, signed_at";

export async function latestCheckpoint(db: Queryable): Promise<StoredCheckpoint | null> {
  const { rows } = await db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM log_checkpoints ORDER BY tree_size DESC LIMIT 1`);
  return rows[0] ? checkpointOf(rows[0]) : null;
}

export async function checkpointAt(db: Queryable, treeSize: number): Promise<StoredCheckpoint | null> {
  const { rows } = await db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM log_checkpoints WHERE tree_size = $1`, [treeSize]);
  return rows[0] ? checkpointOf(rows[0]) : null;
}

/** Checkpoints newest first, those below `before` (a tree size) when given. */
export async function listCheckpoints(db: Queryable, limit: number, before: number | null): Promise<StoredCheckpoint[]> {
  const { rows } = await db.query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM log_checkpoints WHERE $1::bigint IS NULL OR tree_size < $1 ORDER BY tree_size DESC LIMIT $2`, [before, limit]);
  return rows.map(checkpointOf);
}
