// Command handling, the same for every aggregate: load the stream, fold it with evolve, decide, append with
// the version that was read. A version conflict is retried (re-read, re-decide) only as often as asked.
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

export async function handleCommand<State, Event extends { type: string; data: object }, Command>(
  store: EventStore,
  streamName: string,
  decider: Decider<State, Event, Command>,
  command: Command,
  meta: CommandMetadata,
  options: { retries: number },
): Promise<Handled<State, Event>> {
  for (let attempt = 0; ; attempt++) {
    const { version, events: stored } = await store.readStream(streamName);
    const before = stored.map((e) => decider.parse(e)).reduce((s, e) => decider.evolve(s, e), decider.initialState);
    const events = decider.decide(command, before, meta);
    const after = events.reduce((s, e) => decider.evolve(s, e), before);
    if (events.length === 0) return { events, before, after, position: -1, version };
    const metadata: EventMetadata = eventMetadata(meta, decider.schemaVersion);
    try {
      const appended = await store.append(
        streamName,
        events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown>, metadata })),
        { expectedVersion: version === -1 ? 'no_stream' : version },
      );
      return { events, before, after, position: appended.position, version: appended.nextExpectedVersion };
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || attempt >= options.retries) throw error;
      // Jittered, growing pause so writers that collided do not collide again in lockstep.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2 ** attempt, 64)));
    }
  }
}
