// What a projection is: a named, versioned fold of events into tables it owns. The projector runs it,
// commits its writes and its checkpoint in one transaction, and can rebuild it from the first event.
import type { Queryable } from '../adapters/db/db.ts';
import type { StoredEvent } from '../commands/event-store.ts';

export interface Projection {
  readonly name: string;
  /** Bumped whenever the tables or the rules change; a stored version that differs means rebuild. */
  readonly version: number;
  /** Tables the projection owns, emptied by a rebuild (children before parents). */
  readonly tables: readonly string[];
  /** Event types it reacts to; others only move its checkpoint. */
  readonly handles: ReadonlySet<string>;
  /** Applies one event inside the projector's transaction. */
  apply(tx: Queryable, event: StoredEvent): Promise<void>;
}
