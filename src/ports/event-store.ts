// The event store port: what the command layer and the projector need from any event store
// (PostgreSQL, PGlite or EventStoreDB). Adapters live in src/adapters/eventstore.
import type { Queryable, Statement } from './db.ts';
import type { Observable } from 'rxjs';

/** Where a reader stands in the global log; opaque to callers, ordered by `compareCheckpoints`. */
export interface Checkpoint {
  /** PostgreSQL: the writing transaction's id; EventStoreDB: the commit position. */
  readonly tx: number;
  /** PostgreSQL: the global position; EventStoreDB: the prepare position. */
  readonly pos: number;
}

export const START: Checkpoint = { tx: 0, pos: 0 };

export function compareCheckpoints(a: Checkpoint, b: Checkpoint): number {
  return a.tx !== b.tx ? Math.sign(a.tx - b.tx) : Math.sign(a.pos - b.pos);
}

export interface NewEvent {
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly metadata: Record<string, unknown>;
}

export interface StoredEvent extends NewEvent {
  readonly eventId: string;
  readonly streamName: string;
  /** 0-based position of the event in its stream. */
  readonly streamPosition: number;
  /** The event's position in the global log: what commands return and queries accept as min_position. */
  readonly position: number;
  readonly checkpoint: Checkpoint;
  readonly recordedAt: string;
}

/** The metadata keys projections read: when the event happened, who acted, and through which external agent. */
export const PROJECTED_METADATA = ['occurred_at', 'actor', 'client'] as const;

/**
 * An event as projections read it: no event id, stream version or recording time, and of the metadata only
 * PROJECTED_METADATA's keys (one the event lacks reads as null). A rebuild reads millions of events and holds
 * each batch of them across six folds; what none of them reads was a tenth of a one-pass rebuild's time to
 * format, send, decode and collect (measured). A projection that needs more widens this, for every adapter.
 */
export type ProjectedEvent = Pick<StoredEvent, 'streamName' | 'position' | 'checkpoint' | 'type' | 'data' | 'metadata'>;

/** Of an event's metadata, what projections read: PROJECTED_METADATA's keys, null where the event lacks one. */
export function projectedMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const key of PROJECTED_METADATA) kept[key] = metadata[key] ?? null;
  return kept;
}

/** The projected form of a stored event (for adapters that cannot leave the rest out as they read). */
export function projected(event: StoredEvent): ProjectedEvent {
  return { streamName: event.streamName, position: event.position, checkpoint: event.checkpoint, type: event.type, data: event.data, metadata: projectedMetadata(event.metadata) };
}

/** 'no_stream': the stream must not exist; 'any': no check; a number: the stream's current version (last streamPosition). */
export type ExpectedVersion = number | 'no_stream' | 'any';

export interface AppendResult {
  /** The stream's version after the append (the last event's streamPosition). */
  readonly nextExpectedVersion: number;
  /** Global position of the last appended event. */
  readonly position: number;
  /** Checkpoint of the last appended event: a reader that has reached it has read the append. */
  readonly checkpoint: Checkpoint;
}

export interface ReadAllResult<E extends ProjectedEvent = StoredEvent> {
  readonly events: E[];
  /**
   * True when events exist after the last one returned that this read did not return: not yet safe to read (a
   * transaction that began earlier is still open) or committed since. The reader should look again shortly
   * rather than wait for a notification.
   */
  readonly pending: boolean;
}

/**
 * The log of a store kept in the projections' own database, read inside a projection's transaction: the read
 * then shares the transaction's first round trip instead of taking one of its own before it.
 */
export interface LogInDatabase {
  /** readAllProjected's page, read by a statement on `on` (a transaction on the same database). */
  readAllProjectedOn(on: Queryable, options: { after: Checkpoint; limit: number }): Promise<ReadAllResult<ProjectedEvent>>;
  /**
   * The events this store appended after `after`, in log order, as far as it remembers them: a guess at the next
   * page to read ahead by, never a substitute for reading it (another process's appends are not in it, and a
   * position may be off where another writer drew from the same sequence meanwhile).
   */
  appendedAfter(after: Checkpoint): ProjectedEvent[];
  /**
   * The start of the page a read after `after` (of at most `limit` events) would give, if it is the events this
   * store appended since, exactly as the read would give them; with a statement that fails unless it is, and
   * that answers, as `pending`, what the read's `pending` would be, and as `more`, whether the page goes on after
   * them. Null when this store knows it cannot tell.
   */
  guessed?(after: Checkpoint, limit: number): GuessedPage | null;
}

export interface GuessedPage {
  readonly events: ProjectedEvent[];
  readonly expect: Statement;
}

/** A part of a stream: up to `max` events from stream position `from` (inclusive). */
export interface StreamRange {
  readonly from: number;
  readonly max: number;
}

export interface EventStore {
  append(streamName: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult>;
  /**
   * The events of one stream in order, all of them, or with a range at most `max` from stream position `from`
   * (a read whose size is bounded however long the stream is); version is the stream's current version (-1 for
   * a stream that does not exist), whatever part of it was read.
   */
  readStream(streamName: string, range?: StreamRange): Promise<{ version: number; events: StoredEvent[] }>;
  /** Up to `limit` events after `after`, in the order a subscriber must apply them. */
  readAll(options: { after: Checkpoint; limit: number }): Promise<ReadAllResult>;
  /** readAll's page (the same events, the same `pending`) as projections read it. */
  readAllProjected(options: { after: Checkpoint; limit: number }): Promise<ReadAllResult<ProjectedEvent>>;
  /** Catch-up from `after`, then live; never skips an event, never repeats one. */
  subscribe(options: { after: Checkpoint; batchSize?: number }): Observable<StoredEvent>;
  /** Fires (at least) once after any append commits; lets a puller sleep until there is something to read. */
  changes(): Observable<void>;
  /**
   * Fires (at least) once after an append to `streamName` commits, on this server or another sharing the store;
   * rarely for nothing (when a notification cannot say which streams changed). A reader of one stream sleeps
   * through appends to every other.
   */
  streamChanges(streamName: string): Observable<void>;
  /** The checkpoint of the event at `position`, or null when there is none. */
  checkpointOf(position: number): Promise<Checkpoint | null>;
  /** Checkpoint of the last event in the log (START when empty): how far a reader could get right now. */
  head(): Promise<{ checkpoint: Checkpoint; position: number }>;
  /** The log as read from inside a transaction on `db`, when it lives in that database; null (or absent) when not. */
  logIn?(db: Queryable): LogInDatabase | null;
  close(): Promise<void>;
}

export class ConcurrencyError extends Error {
  readonly code = 'concurrency_conflict';
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamName} is at version ${actual}, expected ${String(expected)}`);
    this.name = 'ConcurrencyError';
  }
}
