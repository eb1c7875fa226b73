// Rebuilds every projection from the first event through rebuildProjection (the rebuild entry point), one
// after another, each timed on its own.
import type { Db } from '../src/adapters/db/db.ts';
import type { EventStore } from '../src/commands/event-store.ts';
import type { Projection } from '../src/projections/projection.ts';
import { rebuildProjection } from '../src/projections/projector.ts';

export interface RebuildTime {
  readonly projection: string;
  readonly events: number;
  readonly seconds: number;
}

export async function rebuildAll(store: EventStore, db: Db, projections: readonly Projection[]): Promise<RebuildTime[]> {
  const times: RebuildTime[] = [];
  for (const projection of projections) {
    const started = performance.now();
    const { events } = await rebuildProjection({ store, db }, projection);
    times.push({ projection: projection.name, events, seconds: (performance.now() - started) / 1000 });
  }
  return times;
}
