// Read-your-writes and staleness: every query answer names the projection position it reflects, and a
// query that passes min_position is answered only once the projections it reads have got there.
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Projection } from '../projections/projection.ts';
import { livePosition, projectionStatus } from '../projections/projector.ts';
import type { Runtime } from '../runtime.ts';
import { HttpProblem } from './errors.ts';

export const MinPosition = z.coerce.number().int().nonnegative().optional();

function pick(runtime: Runtime, names: readonly string[]): Projection[] {
  return runtime.projections.filter((p) => names.includes(p.name));
}

/** Waits (bounded) until the named projections have processed the event at minPosition; 503 with the lag if not. */
export async function awaitPosition(runtime: Runtime, names: readonly string[], minPosition: number | undefined, waitMs: number): Promise<void> {
  if (minPosition === undefined) return;
  const projections = pick(runtime, names);
  const deps = { store: runtime.store, db: runtime.db };
  if (!(await runtime.readWait.until(minPosition, waitMs, projections.map((p) => p.name)))) {
    const status = await projectionStatus(deps, projections);
    const asOf = Math.min(...status.map((s) => s.position));
    throw new HttpProblem(503, 'projection_lag', `the read model has not reached position ${minPosition} after ${waitMs} ms (it reflects position ${asOf}); retry shortly`, {
      min_position: minPosition,
      as_of_position: asOf,
      lag: Math.max(...status.map((s) => s.lag)),
    });
  }
}

/** The position every named projection has reached: read it BEFORE the rows, so the rows reflect at least it. */
export async function asOfPosition(runtime: Runtime, names: readonly string[]): Promise<number> {
  return livePosition(runtime.db, pick(runtime, names));
}

export function stamp(reply: FastifyReply, position: number): void {
  void reply.header('x-nomos-as-of-position', String(position));
}
