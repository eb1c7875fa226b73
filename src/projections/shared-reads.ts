// The live projectors of one process read the same log from the same place: after an append they are all
// caught up to the same checkpoint and a notification wakes them together. Each reading it for itself cost
// one statement per projector per append, with the log's safe bound (a read of pg_locks, ~1 ms) in each;
// through this store the reads they ask for in the same turn of the event loop are one.
import type { Queryable } from '../ports/db.ts';
import type { Checkpoint, EventStore, ProjectedEvent, ReadAllResult } from '../ports/event-store.ts';

/**
 * `store` with readAllProjected (what projectors read) shared between callers asking for the same page (same
 * `after`, same `limit`) before its read starts. A caller never gets a read begun before it asked, so it sees
 * everything committed before it asked, as with a read of its own; the callers share the same event objects,
 * which projections only read.
 */
export function sharedReads(store: EventStore): EventStore {
  const waiting = new Map<string, Promise<ReadAllResult<ProjectedEvent>>>();
  const readAllProjected = (options: { after: Checkpoint; limit: number }): Promise<ReadAllResult<ProjectedEvent>> => {
    const key = `${options.after.tx}:${options.after.pos}:${options.limit}`;
    const queued = waiting.get(key);
    if (queued) return queued;
    const read = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      // From here on a caller asking for the same page starts a read of its own.
      waiting.delete(key);
      return store.readAllProjected(options);
    });
    waiting.set(key, read);
    return read;
  };
  return {
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    readAllProjected,
    subscribe: (...args) => store.subscribe(...args),
    changes: () => store.changes(),
    streamChanges: (streamName) => store.streamChanges(streamName),
    checkpointOf: (...args) => store.checkpointOf(...args),
    head: () => store.head(),
    // A log read inside a projection's transaction is that transaction's own: not shared.
    ...(store.logIn && { logIn: (db: Queryable) => store.logIn!(db) }),
    close: () => store.close(),
  };
}
