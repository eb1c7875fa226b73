// The event store on PostgreSQL or PGlite (same SQL through the Db port). Appends lock the stream's row and
// check its version in one statement; readers follow (transaction_id, global_position) below the oldest open
// appending transaction, so a transaction that commits late is read late rather than skipped (see migrations/004 and 013).
// NOTIFY, sent after the commit, wakes other processes' subscribers (on PostgreSQL; the embedded database has no
// other process); this process's are woken directly.
import { randomUUID } from 'node:crypto';
import { Observable, Subject } from 'rxjs';
import { type Db, PREPARED, type Queryable } from '../../ports/db.ts';
import {
  type AppendResult,
  type Checkpoint,
  compareCheckpoints,
  ConcurrencyError,
  type EventStore,
  type ExpectedVersion,
  type GuessedPage,
  type LogInDatabase,
  type NewEvent,
  PROJECTED_METADATA,
  type ProjectedEvent,
  projectedMetadata,
  type ReadAllResult,
  START,
  type StoredEvent,
  type StreamRange,
} from '../../ports/event-store.ts';

export const EVENTS_CHANNEL = 'nomos_events';
/**
 * A NOTIFY names the streams appended to since the last one, after the store's instance id, a line each; past
 * this many characters (PostgreSQL takes 8000 bytes) it says ANY_STREAM instead, and every stream's readers look.
 */
const NOTIFY_MAX_CHARS = 7_000;
const ANY_STREAM = '*';
const RECENT_APPENDS = 4_096;
/** How many of its last appended events a store remembers for projectors to read ahead by, and up to what size. */
const RECENT_EVENTS = 512;
const GUESS_MAX_CHARS = 16_384;

interface EventRow {
  global_position: number;
  tx: string;
  event_id: string;
  stream_name: string;
  stream_position: number;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  recorded_at: string;
}

// recorded_at as toISOString writes it (UTC, milliseconds), formatted by the database: a rebuild reads millions
// of events, and parsing each time into a Date to print it again was a twentieth of its time (profiled).
const COLUMNS = `global_position, transaction_id::text AS tx, event_id::text AS event_id, stream_name, stream_position,
  type, data, metadata, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS recorded_at`;

// What a projected read selects (ProjectedEvent): the metadata cut down to the keys projections read.
const PROJECTED_COLUMNS = `global_position, transaction_id::text AS tx, stream_name, type, data,
  jsonb_build_object(${PROJECTED_METADATA.map((key) => `'${key}', metadata->'${key}'`).join(', ')}) AS metadata`;

type ProjectedRow = Pick<EventRow, 'global_position' | 'tx' | 'stream_name' | 'type' | 'data' | 'metadata'>;
type PageRow<R> = R & { pending: boolean; order_tx: string | null };

/** Whether an event after ($1, $2) is at or above the bound (a CTE `bound`): held back, to be read later. */
const PENDING = `(SELECT global_position FROM events
      WHERE (transaction_id, global_position) >
            (greatest($1::text::xid8, (SELECT b FROM bound)), CASE WHEN (SELECT b FROM bound) > $1::text::xid8 THEN -1 ELSE $2::bigint END)
      ORDER BY transaction_id, global_position LIMIT 1) IS NOT NULL`;

/**
 * readAll's statement. `pending` is either a column of every row, read once (an uncorrelated subquery), with the
 * page in log order as its index scan yields it; or the head of the page, joined so that an empty page still
 * carries it, which costs a sort of the page (a rebuild's 20 000-event page sorted on disk past work_mem: 40 of
 * 91 ms, profiled), hence only for empty pages.
 */
function readPageSql(columns: string, limit: number, pendingAs: 'column' | 'joined'): string {
  const page = `SELECT ${columns}, transaction_id AS order_tx FROM events
      WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint) AND transaction_id < (SELECT b FROM bound)
      ORDER BY transaction_id, global_position
      LIMIT ${limit}`;
  const bound = 'WITH bound AS MATERIALIZED (SELECT events_safe_bound() AS b)';
  return pendingAs === 'column'
    ? `${bound} SELECT ${PENDING} AS pending, page.* FROM (${page}) page ORDER BY page.order_tx, page.global_position`
    : `${bound} SELECT head.pending, page.* FROM (SELECT ${PENDING} AS pending) head LEFT JOIN LATERAL (${page}) page ON true ORDER BY page.order_tx, page.global_position`;
}

/**
 * A statement that fails (nomos_expect, migrations/019) unless readPageSql's page after ($1, $2) would begin with
 * exactly the events $3 names ('tx/position/event id', in log order); that says, as `pending`, what readPageSql's
 * would, and as `more`, whether that page holds events after them (appended since they were named). Its statement
 * text is one per limit, as readPageSql's.
 */
const expectPageSql = (limit: number) => `WITH bound AS MATERIALIZED (SELECT events_safe_bound() AS b),
  page AS (SELECT transaction_id, global_position, transaction_id::text || '/' || global_position || '/' || event_id::text AS named FROM events
      WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint) AND transaction_id < (SELECT b FROM bound)
      ORDER BY transaction_id, global_position
      LIMIT ${limit})
  SELECT nomos_expect((SELECT array_agg(named ORDER BY transaction_id, global_position) FROM page)[1:cardinality($3::text[])] = $3::text[],
           'the log after the checkpoint does not begin with the batch this process appended') AS expected,
         ${PENDING} AS pending, (SELECT count(*) FROM page) > cardinality($3::text[]) AS more`;

/**
 * A value as PostgreSQL's jsonb gives it back: keys in jsonb's order (shorter first, then bytewise), which JSON.parse
 * keeps (integer-like keys aside, which JavaScript orders first either way). Objects already in that order are kept
 * as they are, and only those that are not are copied, sorted.
 */
function inJsonbOrder(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && typeof item === 'object') value[i] = inJsonbOrder(item);
    }
    return value;
  }
  const object = value as Record<string, unknown>;
  let previous: string | undefined;
  let ordered = true;
  // JSON.parse's objects: own keys only, none of them inherited.
  for (const key in object) {
    const item = object[key];
    if (item !== null && typeof item === 'object') {
      const kept = inJsonbOrder(item);
      if (kept !== item) object[key] = kept;
    }
    if (ordered && previous !== undefined && jsonbKeyOrder(previous, key) > 0) ordered = false;
    previous = key;
  }
  if (ordered) return object;
  // fromEntries defines each key as its own, __proto__ included, where an assignment would not.
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => jsonbKeyOrder(a, b)));
}

/** projectedMetadata as PROJECTED_COLUMNS reads it: jsonb_build_object's keys come back in jsonb's order. */
function metadataAsRead(metadata: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of METADATA_AS_READ) kept[key] = inJsonbOrder(metadata[key] ?? null);
  return kept;
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** jsonb's order of object keys: the shorter first (in UTF-8 bytes), then bytewise. */
function jsonbKeyOrder(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length - y.length || Buffer.compare(x, y);
}

/** PROJECTED_METADATA's keys in the order jsonb_build_object gives them back (metadataAsRead). */
const METADATA_AS_READ = [...PROJECTED_METADATA].sort((a, b) => jsonbKeyOrder(a, b));

function toProjected(row: ProjectedRow): ProjectedEvent {
  return {
    streamName: row.stream_name,
    position: Number(row.global_position),
    checkpoint: { tx: Number(row.tx), pos: Number(row.global_position) },
    type: row.type,
    data: row.data,
    metadata: row.metadata,
  };
}

function toStored(row: EventRow): StoredEvent {
  return {
    eventId: row.event_id,
    streamName: row.stream_name,
    streamPosition: Number(row.stream_position),
    position: Number(row.global_position),
    checkpoint: { tx: Number(row.tx), pos: Number(row.global_position) },
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    recordedAt: row.recorded_at,
  };
}

/**
 * PostgreSQL's text and jsonb cannot hold U+0000, which command output can carry, nor a lone UTF-16 surrogate,
 * which a model's text can (the API refuses those in what it is sent): each is stored as U+FFFD (in values and in
 * keys) rather than failing the append, and the command, outright. JSON.stringify writes U+0000 as the escape
 * \u0000 and a surrogate only when it is alone, as \udXXX (a pair it writes as the character itself); an escape
 * preceded by an odd number of backslashes is a literal backslash and stays.
 */
function storableJson(value: unknown): string {
  return JSON.stringify(value).replace(/(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g, '$1\\ufffd');
}

/**
 * The events' data (or metadata), each already JSON, as one JSON array that the append's statement takes apart
 * (jsonb_array_elements): as a jsonb[] parameter, each text was escaped again into an array literal by the
 * driver and unescaped by the database.
 */
const jsonArray = (texts: readonly string[]): string => `[${texts.join(',')}]`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Each event of an append as sent to be stored. */
interface StoredForm {
  readonly data: readonly string[];
  readonly metadata: readonly string[];
  readonly ids: readonly string[];
}

/** An event this store appended, remembered (appendedAfter, guessed); `event` null: too large to keep. */
type Appended =
  | { readonly checkpoint: Checkpoint; readonly event: null }
  | {
      readonly checkpoint: Checkpoint;
      /** As appended: the read-ahead's guess. */
      readonly event: ProjectedEvent;
      readonly eventId: string;
      /** Data and metadata as stored (JSON). */
      readonly data: string;
      readonly metadata: string;
      /** The event as a read of the log would give it, worked out when first asked for (guessed). */
      exact?: ProjectedEvent;
    };

interface QueuedAppend {
  readonly streamName: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedVersion;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

/** Appends one statement takes at most. */
const MAX_GROUP = 64;

/**
 * Several appends (a stream each, no stream twice) in one statement: each claims its stream's next versions as
 * appendOne does (the exact version; a new or empty stream; any version), in the statement's CTEs that fit, and
 * inserts its events; one row per append, in order, whose from_version is null when its claim failed.
 */
const APPEND_GROUP = `WITH input AS (
    SELECT i.idx, i.stream_name, i.count, i.expected
    FROM unnest($1::text[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS i(stream_name, count, expected, idx)),
  existing AS (
    UPDATE streams s SET version = s.version + i.count FROM input i
    WHERE i.expected >= 0 AND s.stream_name = i.stream_name AND s.version = i.expected
    RETURNING i.idx, s.version - i.count AS from_version),
  created AS (
    INSERT INTO streams AS s (stream_name, version)
    SELECT stream_name, count - 1 FROM input WHERE expected = -1 ORDER BY stream_name
    ON CONFLICT (stream_name) DO UPDATE SET version = s.version + EXCLUDED.version + 1 WHERE s.version = -1
    RETURNING s.stream_name, s.version),
  anywhere AS (
    INSERT INTO streams AS s (stream_name, version)
    SELECT stream_name, count - 1 FROM input WHERE expected IS NULL ORDER BY stream_name
    ON CONFLICT (stream_name) DO UPDATE SET version = s.version + EXCLUDED.version + 1
    RETURNING s.stream_name, s.version),
  claimed AS (
    SELECT idx, from_version FROM existing
    UNION ALL SELECT i.idx, c.version - i.count FROM created c JOIN input i USING (stream_name)
    UNION ALL SELECT i.idx, c.version - i.count FROM anywhere c JOIN input i USING (stream_name)),
  appended AS (
    INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata)
    SELECT e.event_id, i.stream_name, c.from_version + e.n, e.type, e.data, e.metadata
    FROM (SELECT x.*, row_number() OVER (PARTITION BY x.idx ORDER BY x.ord) AS n
          FROM ROWS FROM (unnest($4::bigint[]), unnest($5::uuid[]), unnest($6::text[]), jsonb_array_elements($7::jsonb), jsonb_array_elements($8::jsonb))
               WITH ORDINALITY AS x(idx, event_id, type, data, metadata, ord)) e
    JOIN claimed c ON c.idx = e.idx JOIN input i ON i.idx = e.idx
    ORDER BY e.ord
    RETURNING stream_name, global_position)
  SELECT c.from_version, (SELECT max(a.global_position) FROM appended a WHERE a.stream_name = i.stream_name) AS position,
         pg_current_xact_id()::text AS tx
  FROM input i LEFT JOIN claimed c ON c.idx = i.idx
  ORDER BY i.idx`;

/**
 * The least time between two NOTIFYs of one store: what another server's subscribers may wait beyond the commit
 * under a steady stream of appends (never after a quiet spell). Their read-your-writes waits poll the stored
 * checkpoints as often (read-wait.ts).
 */
export const NOTIFY_EVERY_MS = 5;

/**
 * The stores of this process by database. An embedded database belongs to one process, so an append needs no
 * NOTIFY there: the other stores on it are told directly.
 */
const storesOn = new WeakMap<Db, Set<SqlEventStore>>();

export class SqlEventStore implements EventStore, LogInDatabase {
  private readonly changes$ = new Subject<void>();
  /** Readers of one stream each (streamChanges), by stream name; a subject lives while someone listens. */
  private readonly streamSubjects = new Map<string, Subject<void>>();
  /** The streams appended to since the last NOTIFY went out. */
  private unnotified = new Set<string>();
  private listening: Promise<() => Promise<void>> | null = null;
  private closed = false;
  private wakeWanted = false;
  private waking: Promise<void> | null = null;
  /** Appends waiting for the statement in flight to end (see append). */
  private queued: QueuedAppend[] = [];
  private appending = false;
  /** The checkpoints of the last events this store appended, by position (read-your-writes asks for them). */
  private readonly recent = new Map<number, Checkpoint>();
  /** The last events this store appended, in the order it appended them: projectors read ahead by them. */
  private appendedEvents: Appended[] = [];
  /** Names this store's notifications, so that it can tell its own echo from another process's append. */
  private readonly instance = randomUUID();

  /** When this store last sent a NOTIFY (performance.now()), for the spacing of the next. */
  private notifiedAt = -Infinity;
  private readonly notifyEveryMs: number;

  /**
   * notifyEveryMs: the least time between two of this store's NOTIFYs (default NOTIFY_EVERY_MS). The first
   * append after a quiet spell notifies at once; appends that commit within the spacing share the next one.
   */
  constructor(
    private readonly db: Db,
    options: { readonly notifyEveryMs?: number } = {},
  ) {
    this.notifyEveryMs = options.notifyEveryMs ?? NOTIFY_EVERY_MS;
    const stores = storesOn.get(db) ?? new Set();
    stores.add(this);
    storesOn.set(db, stores);
  }

  /**
   * Appends wait their turn: while a statement is in flight, the appends that arrive meanwhile are queued and go
   * together as the next one (group commit: one transaction, one WAL flush and one round trip for all of them).
   * An append that finds nothing in flight goes at once, alone, so one writer waits for nothing. Each append's
   * expected version is checked on its own: one that does not match fails alone. Two appends to the same stream
   * never share a statement (the second waits for the next).
   */
  append(streamName: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    return new Promise<AppendResult>((resolve, reject) => {
      this.queued.push({ streamName, events, expected: options.expectedVersion, resolve, reject });
      if (!this.appending) void this.drainAppends();
    });
  }

  private async drainAppends(): Promise<void> {
    this.appending = true;
    try {
      while (this.queued.length > 0) {
        const streams = new Set<string>();
        const batch: QueuedAppend[] = [];
        const later: QueuedAppend[] = [];
        for (const append of this.queued) {
          if (batch.length < MAX_GROUP && !streams.has(append.streamName)) {
            streams.add(append.streamName);
            batch.push(append);
          } else later.push(append);
        }
        this.queued = later;
        if (batch.length === 1) await this.appendAlone(batch[0]!);
        else await this.appendGroup(batch);
      }
    } finally {
      this.appending = false;
    }
  }

  private async appendAlone(append: QueuedAppend): Promise<void> {
    try {
      append.resolve(await this.appendOne(append.streamName, append.events, append.expected));
    } catch (error) {
      append.reject(error);
    }
  }

  /**
   * Several appends in one statement. A statement the database refuses as a whole (a deadlock with another
   * server's group, a value it cannot store) is tried again an append at a time, so that an error is its own
   * append's.
   */
  private async appendGroup(batch: readonly QueuedAppend[]): Promise<void> {
    const data = batch.map((a) => a.events.map((e) => storableJson(e.data)));
    const metadata = batch.map((a) => a.events.map((e) => storableJson(e.metadata)));
    const ids = batch.map((a) => a.events.map(() => randomUUID()));
    let rows: Array<{ from_version: string | number | null; position: string | number | null; tx: string }>;
    try {
      ({ rows } = await this.db.query<{ from_version: string | number | null; position: string | number | null; tx: string }>(
        APPEND_GROUP,
        [
          batch.map((a) => a.streamName),
          batch.map((a) => a.events.length),
          batch.map((a) => (a.expected === 'any' ? null : typeof a.expected === 'number' ? a.expected : -1)),
          batch.flatMap((a, i) => a.events.map(() => i + 1)),
          ids.flat(),
          batch.flatMap((a) => a.events.map((e) => e.type)),
          jsonArray(data.flat()),
          jsonArray(metadata.flat()),
        ],
        { name: 'nomos_append_group' },
      ));
    } catch (error) {
      // The database refused the statement (it has a SQLSTATE): nothing of it was committed, so each append may go
      // again alone. Anything else (a connection lost) leaves unknown whether it committed: each append fails.
      const refused = typeof (error as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((error as { code: string }).code);
      for (const append of batch) {
        if (refused) await this.appendAlone(append);
        else append.reject(error);
      }
      return;
    }
    const failed: Array<{ append: QueuedAppend }> = [];
    batch.forEach((append, i) => {
      const row = rows[i];
      if (row?.from_version == null || row.position == null) {
        failed.push({ append });
        return;
      }
      append.resolve(this.appended(append.streamName, append.events, { data: data[i]!, metadata: metadata[i]!, ids: ids[i]! }, Number(row.from_version), Number(row.position), row.tx));
    });
    const written = batch.filter((_, i) => rows[i]?.position != null).map((a) => a.streamName);
    if (written.length > 0) this.wakeSubscribers(written);
    for (const { append } of failed) append.reject(await this.conflict(append.streamName, append.expected));
  }

  /**
   * One append in one statement, so one round trip and a transaction no longer than it: claim the stream's next
   * versions (the row lock orders concurrent writers; a version that moved meanwhile matches no row) and insert
   * the events. Referencing `events` locks it when the statement is parsed, before the transaction has an xid,
   * which readers rely on (events_safe_bound in migrations/004 and 013). Subscribers are woken after the commit.
   */
  private async appendOne(streamName: string, events: readonly NewEvent[], expected: ExpectedVersion): Promise<AppendResult> {
    const count = events.length;
    const data = events.map((e) => storableJson(e.data));
    const metadata = events.map((e) => storableJson(e.metadata));
    const ids = events.map(() => randomUUID());
    const claimsExisting = typeof expected === 'number' && expected >= 0;
    const claim =
      claimsExisting
        ? // The stream must exist at exactly that version.
          `UPDATE streams SET version = version + $2::bigint WHERE stream_name = $1 AND version = $3::bigint
           RETURNING version - $2::bigint AS from_version`
        : // New or empty stream ('no_stream', -1), or any version.
          `INSERT INTO streams AS s (stream_name, version) VALUES ($1, $2::bigint - 1)
           ON CONFLICT (stream_name) DO UPDATE SET version = s.version + $2::bigint WHERE $3::bigint IS NULL OR s.version = -1
           RETURNING s.version - $2::bigint AS from_version`;
    const { rows } = await this.db.query<{ from_version: number | null; position: number | null; tx: string }>(
      `WITH claimed AS (${claim}),
       appended AS (
         INSERT INTO events (event_id, stream_name, stream_position, type, data, metadata)
         SELECT e.event_id, $1, c.from_version + e.n, e.type, e.data, e.metadata
         FROM claimed c, ROWS FROM (unnest($4::uuid[]), unnest($5::text[]), jsonb_array_elements($6::jsonb), jsonb_array_elements($7::jsonb))
              WITH ORDINALITY AS e(event_id, type, data, metadata, n)
         ORDER BY e.n
         RETURNING global_position)
       SELECT (SELECT from_version FROM claimed) AS from_version, (SELECT max(global_position) FROM appended) AS position,
              pg_current_xact_id()::text AS tx`,
      [
        streamName,
        count,
        expected === 'any' ? null : typeof expected === 'number' ? expected : -1,
        ids,
        events.map((e) => e.type),
        jsonArray(data),
        jsonArray(metadata),
      ],
      // Prepared once per connection: planning was about a third of an append. Events and streams are never
      // behind a changed search_path.
      { name: claimsExisting ? 'nomos_append_to_existing' : 'nomos_append_claiming' },
    );
    const row = rows[0];
    if (row?.from_version == null || row.position == null) throw await this.conflict(streamName, expected);
    const result = this.appended(streamName, events, { data, metadata, ids }, Number(row.from_version), Number(row.position), row.tx);
    this.wakeSubscribers([streamName]);
    return result;
  }

  /** `stored`: each event's data and metadata as sent to be stored (JSON), and its id. */
  private appended(streamName: string, events: readonly NewEvent[], stored: StoredForm, fromVersion: number, position: number, tx: string): AppendResult {
    const checkpoint = { tx: Number(tx), pos: position };
    this.recent.set(position, checkpoint);
    if (this.recent.size > RECENT_APPENDS) this.recent.delete(this.recent.keys().next().value!);
    // The events' own positions are the last one's minus their distance from it: right unless another writer drew
    // from the sequence in between, which only spoils the guess (appendedAfter).
    const first = position - events.length + 1;
    events.forEach((event, i) => {
      const pos = first + i;
      const checkpoint = { tx: Number(tx), pos };
      // A large event (a tool's output) is not kept for a guess: a guess without it is only wrong, not costly, and
      // known to be incomplete (guessed).
      const data = stored.data[i]!;
      if (data.length > GUESS_MAX_CHARS) this.appendedEvents.push({ checkpoint, event: null });
      else {
        const projected = { streamName, position: pos, checkpoint, type: event.type, data: event.data, metadata: projectedMetadata(event.metadata) };
        this.appendedEvents.push({ checkpoint, event: projected, eventId: stored.ids[i]!, data, metadata: stored.metadata[i]! });
      }
    });
    if (this.appendedEvents.length > 2 * RECENT_EVENTS) this.appendedEvents = this.appendedEvents.slice(-RECENT_EVENTS);
    return { nextExpectedVersion: fromVersion + events.length, position, checkpoint };
  }

  logIn(db: Queryable): LogInDatabase | null {
    return db === this.db ? this : null;
  }

  appendedAfter(after: Checkpoint): ProjectedEvent[] {
    const events: ProjectedEvent[] = [];
    for (const appended of this.tailAfter(after)) if (appended.event !== null) events.push(appended.event);
    return events;
  }

  /** What this store remembers having appended after `after`, in log order (whether complete or not). */
  private tailAfter(after: Checkpoint): readonly Appended[] {
    // One statement at a time appends (see append), so later appends hold later transaction ids: the list is in
    // log order, and those after `after` are its tail.
    let from = this.appendedEvents.length;
    while (from > 0 && compareCheckpoints(this.appendedEvents[from - 1]!.checkpoint, after) > 0) from -= 1;
    return this.appendedEvents.slice(from);
  }

  guessed(after: Checkpoint, limit: number): GuessedPage | null {
    const tail = this.tailAfter(after);
    // Remembered back to `after`? The oldest remembered event must not be after the first one a page would hold,
    // which is unknown: a tail that is the whole memory may have lost its head.
    if (tail.length === 0 || tail.length >= limit || tail.length === this.appendedEvents.length) return null;
    const events: ProjectedEvent[] = [];
    const named: string[] = [];
    for (const appended of tail) {
      if (appended.event === null) return null;
      appended.exact ??= {
        ...appended.event,
        data: inJsonbOrder(JSON.parse(appended.data)) as Record<string, unknown>,
        metadata: metadataAsRead(JSON.parse(appended.metadata) as Record<string, unknown>),
      };
      events.push(appended.exact);
      named.push(`${appended.checkpoint.tx}/${appended.checkpoint.pos}/${appended.eventId}`);
    }
    return { events, expect: { sql: expectPageSql(limit), params: [String(after.tx), after.pos, named], options: PREPARED } };
  }

  readAllProjectedOn(on: Queryable, options: { after: Checkpoint; limit: number }): Promise<ReadAllResult<ProjectedEvent>> {
    return this.readPage(PROJECTED_COLUMNS, toProjected, options, on);
  }

  private async conflict(streamName: string, expected: ExpectedVersion): Promise<ConcurrencyError> {
    const current = await this.db.query<{ version: number }>('SELECT version FROM streams WHERE stream_name = $1', [streamName]);
    return new ConcurrencyError(streamName, expected, Number(current.rows[0]?.version ?? -1));
  }

  /**
   * NOTIFY after the commit, not inside the append: PostgreSQL serialises the commits of notifying
   * transactions (a lock held through the WAL flush), and signals the listening backends before it answers. At
   * most one NOTIFY is in flight per store, and they are spaced by notifyEveryMs: appends that commit meanwhile
   * are covered by the next. Under a steady stream of appends that is one NOTIFY, and one wake-up of every
   * listening backend and process, per spacing rather than per append group. A lost one only delays: projectors
   * also look on their own.
   */
  private wakeSubscribers(streams: readonly string[]): void {
    // This process's own subscribers are told at once; the notification is for other processes (its echo here
    // is ignored, by its payload). The embedded database has no other process.
    this.changed(streams);
    if (this.db.kind === 'pglite') {
      for (const other of storesOn.get(this.db) ?? []) if (other !== this) other.changed(streams);
      return;
    }
    for (const stream of streams) this.unnotified.add(stream);
    this.wakeWanted = true;
    if (this.waking || this.closed) return;
    this.waking = (async () => {
      // After what this turn of the event loop sends (the projectors' read of the log, woken just above): a socket
      // write costs enough on a small VM to show on a lone command's path.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.wakeWanted && !this.closed) {
        const wait = this.notifiedAt + this.notifyEveryMs - performance.now();
        if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
        this.wakeWanted = false;
        this.notifiedAt = performance.now();
        await this.db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, this.notification()], PREPARED).catch(() => undefined);
      }
      this.waking = null;
    })();
  }

  async readStream(streamName: string, range?: StreamRange): Promise<{ version: number; events: StoredEvent[] }> {
    if (range === undefined) {
      const { rows } = await this.db.query<EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream_name = $1 ORDER BY stream_position`, [streamName]);
      const events = rows.map(toStored);
      return { version: events.length === 0 ? -1 : events[events.length - 1]!.streamPosition, events };
    }
    const { from, max } = range;
    if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(max) || max < 0) throw new RangeError(`readStream: from and max must be non-negative integers, got ${from} and ${max}`);
    // The version and the range in one statement (one snapshot); a row with no event carries the version of a
    // range past the end.
    const { rows } = await this.db.query<EventRow & { version: string | number }>(
      `SELECT v.version, e.* FROM (SELECT coalesce((SELECT version FROM streams WHERE stream_name = $1), -1) AS version) v
       LEFT JOIN LATERAL (SELECT ${COLUMNS} FROM events WHERE stream_name = $1 AND stream_position >= $2 ORDER BY stream_position LIMIT $3) e ON true
       ORDER BY e.stream_position`,
      [streamName, from, max],
      PREPARED,
    );
    const version = Number(rows[0]?.version ?? -1);
    return { version, events: rows[0]?.event_id == null ? [] : rows.map(toStored) };
  }

  async readAll(options: { after: Checkpoint; limit: number }): Promise<ReadAllResult> {
    return this.readPage(COLUMNS, toStored, options);
  }

  async readAllProjected(options: { after: Checkpoint; limit: number }): Promise<ReadAllResult<ProjectedEvent>> {
    return this.readPage(PROJECTED_COLUMNS, toProjected, options);
  }

  private async readPage<R extends ProjectedRow, E extends ProjectedEvent>(
    columns: string,
    toEvent: (row: R) => E,
    options: { after: Checkpoint; limit: number },
    on: Queryable = this.db,
  ): Promise<ReadAllResult<E>> {
    const { after, limit } = options;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`readAll: limit must be a positive integer, got ${limit}`);
    // One statement, one snapshot, one bound: the page is every visible event after `after` below the bound (up
    // to the limit), so the visible events after it are exactly those at or above the bound, and `pending` says
    // whether there are any (held back by an older appending transaction still open). Anything committed after
    // this snapshot notifies after it. The bound is computed once (it reads pg_locks, which is not under the
    // snapshot): two bounds could disagree, and a reader told "nothing pending" would go idle with an event
    // unread. "After `after` and at or above the bound" is one row comparison from whichever of the two is later,
    // and the first such event is looked up in log order, so that the index scan starts there and stops at once:
    // as two conditions the scan began at `after` and, while a projector caught up, stepped through every event
    // below the bound, and as EXISTS the generic plan scanned the table (seconds a read). Prepared, with the limit
    // written into the text: as a parameter it made PostgreSQL's generic plan look costly (it guesses a tenth of
    // the table for an unknown limit), so it planned the statement again on every read (0.26 ms, profiled).
    const params = [String(after.tx), after.pos];
    const page = await on.query<PageRow<R>>(readPageSql(columns, limit, 'column'), params, PREPARED);
    // An empty page has no row to carry `pending`: ask again in the form that always has a row (a new snapshot,
    // so its page and pending are taken together, whatever it finds).
    const { rows } = page.rows.length > 0 ? page : await on.query<PageRow<R>>(readPageSql(columns, limit, 'joined'), params, PREPARED);
    const events = rows[0]?.global_position == null ? [] : rows.map(toEvent);
    return { events, pending: events.length < limit && rows[0]?.pending === true };
  }

  subscribe(options: { after: Checkpoint; batchSize?: number }): Observable<StoredEvent> {
    const limit = options.batchSize ?? 500;
    return new Observable<StoredEvent>((subscriber) => {
      let stopped = false;
      let dirty = true;
      let wake: (() => void) | null = null;
      const changes = this.changes$.subscribe(() => {
        dirty = true;
        wake?.();
      });
      const loop = async () => {
        await this.ensureListening();
        let checkpoint = options.after;
        let backoff = 2;
        while (!stopped) {
          dirty = false;
          const { events, pending } = await this.readAll({ after: checkpoint, limit });
          for (const event of events) {
            if (stopped) return;
            subscriber.next(event);
            checkpoint = event.checkpoint;
          }
          if (events.length === limit) continue;
          if (pending) {
            await sleep(backoff);
            backoff = Math.min(backoff * 2, 100);
            continue;
          }
          backoff = 2;
          if (!dirty && !stopped) await new Promise<void>((resolve) => (wake = resolve));
          wake = null;
        }
      };
      loop().catch((error: unknown) => {
        if (!stopped) subscriber.error(error);
      });
      return () => {
        stopped = true;
        changes.unsubscribe();
        wake?.();
      };
    });
  }

  /** Tells this process's readers: every puller, and the readers of each stream named (all of them for null). */
  private changed(streams: readonly string[] | null): void {
    this.changes$.next();
    if (streams === null) for (const subject of this.streamSubjects.values()) subject.next();
    else for (const stream of streams) this.streamSubjects.get(stream)?.next();
  }

  /** The NOTIFY payload for the streams appended to since the last: this store's id, then the streams, a line each. */
  private notification(): string {
    const streams = [...this.unnotified];
    this.unnotified = new Set();
    const named = [this.instance, ...streams].join('\n');
    return named.length <= NOTIFY_MAX_CHARS ? named : `${this.instance}\n${ANY_STREAM}`;
  }

  /** Another process's NOTIFY: which streams it names; null (any) for a payload that names none. */
  private static notified(lines: readonly string[]): string[] | null {
    const streams = lines.slice(1);
    return streams.length === 0 || streams.includes(ANY_STREAM) ? null : streams;
  }

  streamChanges(streamName: string): Observable<void> {
    return new Observable<void>((subscriber) => {
      let subject = this.streamSubjects.get(streamName);
      if (!subject) {
        subject = new Subject<void>();
        this.streamSubjects.set(streamName, subject);
      }
      const own = subject;
      const subscription = own.subscribe(subscriber);
      // As changes(): an append that committed before LISTEN was in place notified nobody, so look once then.
      this.ensureListening().then(
        () => subscriber.next(),
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        subscription.unsubscribe();
        if (!own.observed && this.streamSubjects.get(streamName) === own) this.streamSubjects.delete(streamName);
      };
    });
  }

  changes(): Observable<void> {
    return new Observable<void>((subscriber) => {
      const subscription = this.changes$.subscribe(subscriber);
      // An append that commits before LISTEN is in place sends its NOTIFY to nobody: signal once LISTEN is
      // ready, so a puller that read before then looks again instead of sleeping through that append.
      this.ensureListening().then(
        () => subscriber.next(),
        (error: unknown) => subscriber.error(error),
      );
      return subscription;
    });
  }

  async checkpointOf(position: number): Promise<Checkpoint | null> {
    const { rows } = await this.db.query<{ tx: string }>('SELECT transaction_id::text AS tx FROM events WHERE global_position = $1', [position]);
    const row = rows[0];
    return row ? { tx: Number(row.tx), pos: position } : null;
  }

  /**
   * checkpointOf for several positions in one statement (none for the last events this store appended, which
   * it remembers); positions not in the log are left out.
   */
  async checkpointsOf(positions: readonly number[]): Promise<Map<number, Checkpoint>> {
    const found = new Map<number, Checkpoint>();
    const unknown: number[] = [];
    for (const position of positions) {
      const checkpoint = this.recent.get(position);
      if (checkpoint) found.set(position, checkpoint);
      else unknown.push(position);
    }
    if (unknown.length === 0) return found;
    const { rows } = await this.db.query<{ pos: string | number; tx: string }>(
      'SELECT global_position AS pos, transaction_id::text AS tx FROM events WHERE global_position = ANY($1::bigint[])',
      [unknown],
      PREPARED,
    );
    for (const r of rows) found.set(Number(r.pos), { tx: Number(r.tx), pos: Number(r.pos) });
    return found;
  }

  async head(): Promise<{ checkpoint: Checkpoint; position: number }> {
    const { rows } = await this.db.query<{ tx: string; global_position: number }>(
      'SELECT transaction_id::text AS tx, global_position FROM events ORDER BY transaction_id DESC, global_position DESC LIMIT 1',
    );
    const row = rows[0];
    if (!row) return { checkpoint: START, position: 0 };
    return { checkpoint: { tx: Number(row.tx), pos: Number(row.global_position) }, position: Number(row.global_position) };
  }

  async close(): Promise<void> {
    await this.waking;
    this.closed = true;
    storesOn.get(this.db)?.delete(this);
    this.changes$.complete();
    for (const subject of this.streamSubjects.values()) subject.complete();
    await this.listening?.then(
      (unlisten) => unlisten(),
      () => undefined,
    );
  }

  private ensureListening(): Promise<() => Promise<void>> {
    if (this.closed) return Promise.resolve(() => Promise.resolve());
    if (!this.listening) {
      const listening = this.db.listen(EVENTS_CHANNEL, (payload) => {
        // A payload of an older server is its id alone: it names no stream, so every reader looks.
        const lines = payload.split('\n');
        if (lines[0] !== this.instance) this.changed(SqlEventStore.notified(lines));
      });
      // A failed LISTEN must not be cached: the next subscriber tries again.
      listening.catch(() => {
        if (this.listening === listening) this.listening = null;
      });
      this.listening = listening;
    }
    return this.listening;
  }
}
