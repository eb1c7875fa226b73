// Rebuilds every projection from the first event: all of them in one pass (rebuildProjections, what
// `nomos projections rebuild` does), then each alone (rebuildProjection), each timed.
import type { Db } from '../src/ports/db.ts';
import type { EventStore } from '../src/ports/event-store.ts';
import type { Projection } from '../src/projections/projection.ts';
import { rebuildProjection, rebuildProjections } from '../src/projections/projector.ts';

export interface RebuildTime {
  readonly projection: string;
  readonly events: number;
  readonly seconds: number;
}

export async function rebuildAll(store: EventStore, db: Db, projections: readonly Projection[]): Promise<{ together: RebuildTime; alone: RebuildTime[] }> {
  let started = performance.now();
  const results = await rebuildProjections({ store, db }, projections);
  const together = { projection: 'all', events: Math.max(...[...results.values()].map((r) => r.events)), seconds: (performance.now() - started) / 1000 };
  const alone: RebuildTime[] = [];
  for (const projection of projections) {
    started = performance.now();
    const { events } = await rebuildProjection({ store, db }, projection);
    alone.push({ projection: projection.name, events, seconds: (performance.now() - started) / 1000 });
  }
  return { together, alone };
}
