// Writers that append generated sessions to the event store. `perCommand` appends one batch per command, as
// the command layer does (the throughput figure); otherwise each session's whole stream goes in one append
// (only to load a large log quickly: same events, fewer transactions).
import type { EventStore } from '../src/ports/event-store.ts';
import type { GeneratedSession } from './generator.ts';

export interface AppendRun {
  readonly events: number;
  readonly sessions: number;
  readonly seconds: number;
}

export async function appendSessions(
  store: EventStore,
  source: Iterator<GeneratedSession>,
  options: { writers: number; untilEvents: number; perCommand: boolean },
): Promise<AppendRun> {
  let events = 0;
  let sessions = 0;
  // Sessions are generated before the clock starts: the figure is the store's, not the generator's.
  const queue: GeneratedSession[] = [];
  for (let planned = 0; planned < options.untilEvents; ) {
    const next = source.next();
    if (next.done === true) break;
    queue.push(next.value);
    planned += next.value.events;
  }
  const writer = async () => {
    for (let session = queue.shift(); session !== undefined; session = queue.shift()) {
      if (options.perCommand) {
        let version = -1;
        for (const batch of session.appends) {
          const appended = await store.append(session.stream, batch, { expectedVersion: version === -1 ? 'no_stream' : version });
          version = appended.nextExpectedVersion;
        }
      } else {
        await store.append(session.stream, session.appends.flat(), { expectedVersion: 'no_stream' });
      }
      events += session.events;
      sessions += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: options.writers }, writer));
  return { events, sessions, seconds: (performance.now() - started) / 1000 };
}
