// Command handling, the same for every aggregate: load the stream, fold it with evolve, decide, append with
// the version that was read. A version conflict is retried (re-read, re-decide) only as often as asked. The
// folded state is kept between commands (StreamStates), so a command on a stream this process wrote last
// costs one statement, the append, instead of reading and folding the whole stream first.
import { ConcurrencyError, type EventStore, type StoredEvent } from '../ports/event-store.ts';
import type { CommandMetadata, EventMetadata } from '../domain/messages.ts';
import { eventMetadata } from '../domain/messages.ts';

export interface Decider<State, Event extends { type: string; data: object }, Command> {
  readonly initialState: State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State, meta: CommandMetadata): Event[];
  /** Parses a stored event back into the union, so nothing unvalidated reaches evolve. */
  parse(stored: StoredEvent): Event;
  schemaVersion: number;
}

export interface Handled<State, Event> {
  readonly events: Event[];
  /** State before the command, as decided upon. */
  readonly before: State;
  readonly after: State;
  /** Global position of the last appended event (-1 when the command appended nothing). */
  readonly position: number;
  readonly version: number;
}

/** Streams whose folded state a process keeps, per decider (the least recently used go first). */
const CACHED_STREAMS = 10_000;

/**
 * A stream's state as this process last read or wrote it, with its version. Only a hint: an append made on
 * it carries that version as expected, so a stream another server has moved on fails the append and is read
 * afresh. A decision that appends nothing (a refusal, a no-op) has no such check, so it is taken again on a
 * fresh read before it is believed.
 */
class StreamStates<State> {
  private readonly entries = new Map<string, { version: number; state: State }>();

  get(streamName: string): { version: number; state: State } | undefined {
    const entry = this.entries.get(streamName);
    if (entry) {
      this.entries.delete(streamName);
      this.entries.set(streamName, entry);
    }
    return entry;
  }

  set(streamName: string, version: number, state: State): void {
    this.entries.delete(streamName);
    this.entries.set(streamName, { version, state });
    if (this.entries.size > CACHED_STREAMS) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(streamName: string): void {
    this.entries.delete(streamName);
  }
}

// Per store (a store is one database: a stream of the same name in another is another stream) and per decider.
const states = new WeakMap<EventStore, WeakMap<object, StreamStates<unknown>>>();

function statesOf<State>(store: EventStore, decider: object): StreamStates<State> {
  let byDecider = states.get(store);
  if (!byDecider) states.set(store, (byDecider = new WeakMap()));
  let cache = byDecider.get(decider);
  if (!cache) byDecider.set(decider, (cache = new StreamStates()));
  return cache as StreamStates<State>;
}

export async function handleCommand<State, Event extends { type: string; data: object }, Command>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Event, Command>,
  command: Command,
  meta: CommandMetadata,
  options: { retries: number },
): Promise<Handled<State, Event>> {
  const cache = statesOf<State>(store, decider);
  for (let attempt = 0; ; attempt++) {
    const cached = cache.get(streamName);
    let version: number;
    let before: State;
    if (cached) {
      ({ version, state: before } = cached);
    } else {
      const read = await store.readStream(streamName);
      version = read.version;
      before = read.events.map((e) => decider.parse(e)).reduce((s, e) => decider.evolve(s, e), decider.initialState);
      cache.set(streamName, version, before);
    }
    let events: Event[];
    try {
      events = decider.decide(command, before, meta);
    } catch (error) {
      // Refused on a state read earlier: refuse only what the stream as it stands now refuses.
      if (cached) {
        cache.forget(streamName);
        attempt--;
        continue;
      }
      throw error;
    }
    if (events.length === 0 && cached) {
      cache.forget(streamName);
      attempt--;
      continue;
    }
    const after = events.reduce((s, e) => decider.evolve(s, e), before);
    if (events.length === 0) return { events, before, after, position: -1, version };
    const metadata: EventMetadata = eventMetadata(meta, decider.schemaVersion);
    try {
      const appended = await store.append(
        streamName,
        events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown>, metadata })),
        { expectedVersion: version === -1 ? 'no_stream' : version },
      );
      cache.set(streamName, appended.nextExpectedVersion, after);
      return { events, before, after, position: appended.position, version: appended.nextExpectedVersion };
    } catch (error) {
      cache.forget(streamName);
      // A stale state of this process's is not a collision: read afresh at once.
      if (error instanceof ConcurrencyError && cached) {
        attempt--;
        continue;
      }
      if (!(error instanceof ConcurrencyError) || attempt >= options.retries) throw error;
      // Jittered, growing pause so writers that collided do not collide again in lockstep.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 64)));
    }
  }
}
