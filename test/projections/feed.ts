// Builds StoredEvents the way the event store hands them to a projector (schema-valid data, metadata with
// occurred_at, increasing positions) — a session's, or any stream's — and applies them as the projector
// would: one transaction per event, only the types the projection handles.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/ports/db.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';
import { parseSessionEvent, type SessionEventOf, type SessionEventType } from '../../src/domain/session/events.ts';
import { sessionStream } from '../../src/domain/session/stream.ts';
import type { Projection } from '../../src/projections/projection.ts';

// Global positions grow across every feed of a test file, as they do in one event log.
let globalPosition = 0;

export class SessionFeed {
  readonly events: StoredEvent[] = [];
  private clock: number;

  constructor(
    readonly sessionId: string,
    startsAt: string,
  ) {
    this.clock = Date.parse(startsAt) - 1000;
  }

  /** The event happens `at`, or one second after the previous one. */
  add<K extends SessionEventType>(type: K, data: SessionEventOf<K>['data'], options: { at?: string } = {}): StoredEvent {
    this.clock = options.at === undefined ? this.clock + 1000 : Date.parse(options.at);
    parseSessionEvent(type, data); // a test must not feed what the store would never hold
    const actor = { role: type === 'UserMessagePosted' ? 'operator' : 'agent', id: 'test' };
    const event = logged(sessionStream(this.sessionId), this.events.length, type, data, new Date(this.clock).toISOString(), actor);
    this.events.push(event);
    return event;
  }

  /** The time of the last event added. */
  get now(): string {
    return new Date(this.clock).toISOString();
  }
}

/** One event as the store would hand it over, at the next global position. */
function logged(streamName: string, streamPosition: number, type: string, data: StoredEvent['data'], at: string, actor: { role: string; id: string }): StoredEvent {
  globalPosition += 1;
  return {
    eventId: randomUUID(),
    streamName,
    streamPosition,
    position: globalPosition,
    checkpoint: { tx: globalPosition, pos: globalPosition },
    recordedAt: at,
    type,
    data,
    metadata: { schema_version: 1, actor, correlation_id: 'c-1', causation_id: 'c-1', occurred_at: at },
  };
}

/** Events of any streams, by one actor, each one minute after the previous one; callers check the data against their schema. */
export class StreamFeed {
  private clock: number;
  private readonly versions = new Map<string, number>();

  constructor(
    startsAt: string,
    private readonly actor: { role: string; id: string },
  ) {
    this.clock = Date.parse(startsAt);
  }

  add(streamName: string, type: string, data: StoredEvent['data']): StoredEvent {
    this.clock += 60_000;
    const streamPosition = this.versions.get(streamName) ?? 0;
    this.versions.set(streamName, streamPosition + 1);
    return logged(streamName, streamPosition, type, data, new Date(this.clock).toISOString(), this.actor);
  }
}

export async function applyEvents(db: Db, projection: Projection, events: readonly StoredEvent[]): Promise<void> {
  for (const event of events) {
    if (!projection.handles.has(event.type)) continue;
    await db.transaction((tx) => projection.applyBatch(tx, [event]));
  }
}

/** Every row of the projection's tables, every column, in a total order: any difference in any value shows up. */
export async function projectionRows(db: Db, projection: Projection): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of projection.tables) out[table] = (await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY to_jsonb(t)::text`)).rows;
  return out;
}

/** Empties the projection's tables; then applies `before` one event per transaction and `events` in batches of `size`. */
export async function projectInBatches(
  db: Db,
  projection: Projection,
  events: readonly StoredEvent[],
  size: number,
  before: readonly StoredEvent[] = [],
): Promise<Record<string, unknown[]>> {
  for (const table of projection.tables) await db.query(`DELETE FROM ${table}`);
  await applyEvents(db, projection, before);
  const handled = events.filter((e) => projection.handles.has(e.type));
  for (let i = 0; i < handled.length; i += size) await db.transaction((tx) => projection.applyBatch(tx, handled.slice(i, i + size)));
  return projectionRows(db, projection);
}

/** A turn as the agent records it: the user's message, tool calls each with its result, the final text. */
export function turn(
  feed: SessionFeed,
  options: { user?: string; tools?: Array<{ name: string; args?: Record<string, unknown>; error?: string }>; text?: string },
): { messageId: string; toolCallIds: string[] } {
  if (options.user !== undefined) feed.add('UserMessagePosted', { message_id: randomUUID(), text: options.user });
  const messageId = randomUUID();
  const toolCallIds: string[] = [];
  for (const tool of options.tools ?? []) {
    const id = randomUUID();
    toolCallIds.push(id);
    feed.add('ToolCallRequested', { tool_call_id: id, message_id: messageId, name: tool.name, args: tool.args ?? {} });
    feed.add('ToolCallCompleted', { tool_call_id: id, result: { ok: tool.error === undefined }, error: tool.error ?? null, result_original_bytes: null });
  }
  if (options.text !== undefined) feed.add('AssistantMessageRecorded', { message_id: messageId, text: options.text });
  return { messageId, toolCallIds };
}
