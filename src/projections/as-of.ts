// A stream's read-model rows as the log stood at a position: its events up to there folded by the projections
// into temporary tables shaped like the live ones, read with the live tables' own queries, then rolled back.
// What an operator saw when they approved, not what the read models say today (GET /sessions/:id?at_position=P).
import type { Db, Queryable } from '../ports/db.ts';
import { type EventStore, projected } from '../ports/event-store.ts';
import type { Projection } from './projection.ts';
import { createTablesLike, liveSchema, tablesOf } from './shadow.ts';

/** Carries the answer out of the transaction it rolls back. */
class RolledBack<T> extends Error {
  constructor(readonly value: T) {
    super('rolled back on purpose: the fold is not kept');
  }
}

/**
 * `read`'s answer over the rows `projections` fold from `streamName`'s events at positions up to `position`;
 * null when the stream had no event by then. Nothing is written: the fold is in temporary tables, rolled back.
 */
export async function asOf<T>(db: Db, store: EventStore, streamName: string, position: number, projections: readonly Projection[], read: (tx: Queryable) => Promise<T>): Promise<T | null> {
  const { events } = await store.readStream(streamName);
  const then = events.filter((e) => e.position <= position).map(projected);
  if (then.length === 0) return null;
  try {
    await db.transaction(async (tx) => {
      const live = await liveSchema(tx);
      for (const projection of projections) await createTablesLike(tx, tablesOf(projection), live, 'pg_temp');
      // Named first, so that every statement (prepared ones too) reads and writes the temporary copies.
      await tx.query(`SET LOCAL search_path TO pg_temp, ${live}`);
      for (const projection of projections) {
        const handled = then.filter((e) => projection.handles.has(e.type));
        if (handled.length > 0) await projection.applyBatch(tx, handled);
      }
      throw new RolledBack(await read(tx));
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.value as T;
    throw error;
  }
  throw new Error('unreachable: the fold always rolls back');
}
