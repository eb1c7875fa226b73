// What a projection is: a named, versioned fold of events into tables it owns. The projector runs it,
// commits its writes and its checkpoint in one transaction, and can rebuild it from the first event.
import type { Queryable, Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';

export interface Projection {
  readonly name: string;
  /** Bumped whenever the tables or the rules change; a stored version that differs means rebuild. */
  readonly version: number;
  /** Tables the projection owns, emptied by a rebuild (children before parents). */
  readonly tables: readonly string[];
  /** Event types it reacts to; others only move its checkpoint. */
  readonly handles: ReadonlySet<string>;
  /**
   * Applies a batch of events it handles, in log order, inside the projector's transaction. The rows must come
   * out the same whether the events arrive one per batch or all in one (test/projections/batching.test.ts).
   * Writes whose results it does not need go by `tx.send`: they then share the commit's round trip.
   */
  applyBatch(tx: Transaction, events: readonly ProjectedEvent[]): Promise<void>;
}

/** applyBatch for a projection that applies each event on its own (one or more statements per event). */
export function eachEvent(apply: (tx: Queryable, event: ProjectedEvent) => Promise<void>): Projection['applyBatch'] {
  return async (tx, events) => {
    for (const event of events) await apply(tx, event);
  };
}
