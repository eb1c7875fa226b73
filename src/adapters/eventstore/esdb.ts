// The event store on EventStoreDB (EVENTSTORE_URL): each stream is an EventStoreDB stream, the global log is
// $all narrowed to this system's stream prefixes, and a checkpoint is an $all position (commit, prepare).
import {
  type AllStreamResolvedEvent,
  ANY,
  type AppendExpectedRevision,
  BACKWARDS,
  END,
  EventStoreDBClient,
  jsonEvent,
  NO_STREAM,
  type Position,
  type ReadPosition,
  type RecordedEvent,
  START as LOG_START,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { Observable, filter, map, share } from 'rxjs';
import {
  type AppendResult,
  type Checkpoint,
  compareCheckpoints,
  ConcurrencyError,
  type EventStore,
  type ExpectedVersion,
  type NewEvent,
  projected,
  type ProjectedEvent,
  type ReadAllResult,
  START,
  type StoredEvent,
  type StreamRange,
} from '../../ports/event-store.ts';

/** The streams this system writes; $all also holds EventStoreDB's own streams, which readers must not see. */
const STREAM_PREFIXES = ['session-', 'entity-', 'knowledge-'] as const;
/** How many $all records one round trip reads while looking for this system's events. */
const PAGE = 500;

const ours = (streamName: string) => STREAM_PREFIXES.some((prefix) => streamName.startsWith(prefix));

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);

const toCheckpoint = (position: Position): Checkpoint => ({ tx: Number(position.commit), pos: Number(position.prepare) });

const fromCheckpoint = (checkpoint: Checkpoint): ReadPosition =>
  compareCheckpoints(checkpoint, START) === 0 ? LOG_START : { commit: BigInt(checkpoint.tx), prepare: BigInt(checkpoint.pos) };

function toRevision(expected: ExpectedVersion): AppendExpectedRevision {
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'any') return ANY;
  return BigInt(expected);
}

function toStored(event: RecordedEvent): StoredEvent {
  const { data, metadata = {}, position } = event;
  if (!event.isJson || !isRecord(data) || !isRecord(metadata)) {
    throw new Error(`event ${event.id} in ${event.streamId} is not a JSON object with JSON metadata`);
  }
  // Servers before 22.6 do not report positions on stream reads; the port needs them on every event.
  if (!position) throw new Error(`EventStoreDB gave no position for event ${event.id}: version 22.6 or later is required`);
  return {
    eventId: event.id,
    streamName: event.streamId,
    streamPosition: Number(event.revision),
    // Every append here is one implicit transaction, so each event has its own commit position.
    position: Number(position.commit),
    checkpoint: toCheckpoint(position),
    type: event.type,
    data,
    metadata,
    recordedAt: event.created.toISOString(),
  };
}

export class EsdbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  /** The name of each stream appended to, live. */
  private readonly changes$: Observable<string>;

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
    // One live subscription at the end of $all, shared by everyone waiting for a change.
    this.changes$ = new Observable<string>((subscriber) => {
      const live = this.client.subscribeToAll({ fromPosition: END, filter: streamNameFilter({ prefixes: [...STREAM_PREFIXES] }) });
      live.on('data', ({ event }: AllStreamResolvedEvent) => subscriber.next(event?.streamId ?? ''));
      live.on('error', (error) => subscriber.error(error));
      return () => void live.unsubscribe().catch(() => undefined);
    }).pipe(share());
  }

  async append(streamName: string, events: readonly NewEvent[], options: { expectedVersion: ExpectedVersion }): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    let revision: bigint;
    try {
      const result = await this.client.appendToStream(
        streamName,
        events.map((e) => jsonEvent({ type: e.type, data: e.data, metadata: e.metadata })),
        { expectedRevision: toRevision(options.expectedVersion) },
      );
      revision = result.nextExpectedRevision;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === NO_STREAM ? -1 : Number(error.actualVersion);
        throw new ConcurrencyError(streamName, options.expectedVersion, actual);
      }
      throw error;
    }
    // The reply's position belongs to the write as a whole; the port promises the last event's: read it back.
    const last = await this.readStreamFrom(streamName, revision, 1);
    const appended = last[0];
    if (appended === undefined) throw new Error(`event ${String(revision)} of ${streamName} vanished right after its append`);
    return { nextExpectedVersion: Number(revision), position: appended.position, checkpoint: appended.checkpoint };
  }

  async readStream(streamName: string, range?: StreamRange): Promise<{ version: number; events: StoredEvent[] }> {
    try {
      if (range !== undefined) {
        // The version first: events appended between the two reads are then beyond it, never before it.
        const last = await this.readLast(streamName);
        const events = range.max === 0 ? [] : await this.readStreamFrom(streamName, BigInt(range.from), range.max);
        return { version: last, events: events.filter((e) => e.streamPosition <= last) };
      }
      const events = await this.readStreamFrom(streamName, 0n, Number.MAX_SAFE_INTEGER);
      return { version: events.length === 0 ? -1 : events[events.length - 1]!.streamPosition, events };
    } catch (error) {
      if (error instanceof StreamNotFoundError) return { version: -1, events: [] };
      throw error;
    }
  }

  async readAll(options: { after: Checkpoint; limit: number }): Promise<ReadAllResult> {
    const { after, limit } = options;
    const events: StoredEvent[] = [];
    let from = fromCheckpoint(after);
    // readAll cannot filter on the server in this client, so pages of $all are filtered here.
    while (events.length < limit) {
      let seen = 0;
      let last: Position | undefined;
      for await (const { event } of this.client.readAll({ fromPosition: from, maxCount: PAGE })) {
        seen++;
        if (!event) continue;
        last = event.position;
        // A read from a position includes the record there, which the caller already has.
        if (!ours(event.streamId) || compareCheckpoints(toCheckpoint(event.position), after) <= 0) continue;
        events.push(toStored(event));
        if (events.length === limit) break;
      }
      if (seen < PAGE || last === undefined) break;
      from = last;
    }
    // $all is in commit order: nothing can appear behind what was read.
    return { events, pending: false };
  }

  async readAllProjected(options: { after: Checkpoint; limit: number }): Promise<ReadAllResult<ProjectedEvent>> {
    // The server sends whole events; only the projection's share of each is kept.
    const { events, pending } = await this.readAll(options);
    return { events: events.map(projected), pending };
  }

  subscribe(options: { after: Checkpoint; batchSize?: number }): Observable<StoredEvent> {
    return new Observable<StoredEvent>((subscriber) => {
      let delivered = options.after;
      const subscription = this.client.subscribeToAll({
        fromPosition: fromCheckpoint(options.after),
        filter: streamNameFilter({ prefixes: [...STREAM_PREFIXES] }),
      });
      subscription.on('data', ({ event }: AllStreamResolvedEvent) => {
        if (!event || !ours(event.streamId)) return;
        let stored: StoredEvent;
        try {
          stored = toStored(event);
        } catch (error) {
          subscriber.error(error);
          return;
        }
        // Never deliver an event at or before the last one, whatever the server's start is inclusive of.
        if (compareCheckpoints(stored.checkpoint, delivered) <= 0) return;
        delivered = stored.checkpoint;
        subscriber.next(stored);
      });
      subscription.on('error', (error) => subscriber.error(error));
      // A subscription that ends by itself would leave its reader silently behind: say so.
      subscription.on('end', () => subscriber.error(new Error('the EventStoreDB subscription to $all ended')));
      return () => void subscription.unsubscribe().catch(() => undefined);
    });
  }

  changes(): Observable<void> {
    return this.changes$.pipe(map(() => undefined));
  }

  streamChanges(streamName: string): Observable<void> {
    return this.changes$.pipe(
      filter((name) => name === streamName),
      map(() => undefined),
    );
  }

  async checkpointOf(position: number): Promise<Checkpoint | null> {
    if (!Number.isSafeInteger(position) || position < 0) return null;
    const at = BigInt(position);
    // Events appended here have prepare = commit, so the commit position alone addresses one.
    for await (const { event } of this.client.readAll({ fromPosition: { commit: at, prepare: at }, maxCount: 1 })) {
      if (event && event.position.commit === at && ours(event.streamId)) return toCheckpoint(event.position);
    }
    return null;
  }

  async head(): Promise<{ checkpoint: Checkpoint; position: number }> {
    // The tail of $all is often EventStoreDB's own records, which no subscriber here will ever reach.
    let from: ReadPosition = END;
    for (;;) {
      let seen = 0;
      let last: Position | undefined;
      for await (const { event } of this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: PAGE })) {
        seen++;
        if (!event) continue;
        last = event.position;
        if (ours(event.streamId)) return { checkpoint: toCheckpoint(event.position), position: Number(event.position.commit) };
      }
      if (seen < PAGE || last === undefined) return { checkpoint: START, position: 0 };
      from = last;
    }
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  /** The stream's last revision, -1 when it does not exist. */
  private async readLast(streamName: string): Promise<number> {
    try {
      for await (const { event } of this.client.readStream(streamName, { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
        if (event) return Number(event.revision);
      }
      return -1;
    } catch (error) {
      if (error instanceof StreamNotFoundError) return -1;
      throw error;
    }
  }

  private async readStreamFrom(streamName: string, fromRevision: bigint, maxCount: number): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for await (const { event } of this.client.readStream(streamName, { fromRevision, maxCount })) {
      if (event) events.push(toStored(event));
    }
    return events;
  }
}
