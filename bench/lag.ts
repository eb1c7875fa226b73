// Projection lag under a steady append rate: for each append, the time from its commit until every live
// projection (the server's projectors) has stored a checkpoint at or past it, polled every 2 ms.
import type { Db } from '../src/ports/db.ts';
import { type Checkpoint, compareCheckpoints, ConcurrencyError, type EventStore, type NewEvent } from '../src/ports/event-store.ts';
import type { GeneratedSession } from './generator.ts';
import { percentile } from './latency.ts';

export interface LagRun {
  readonly events: number;
  /** The rate actually achieved. */
  readonly eventsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
}

const POLL_MS = 2;
const WRITERS = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function checkpoints(db: Db): Promise<Checkpoint[]> {
  const { rows } = await db.query<{ tx: string; pos: number }>('SELECT tx::text AS tx, pos FROM projection_checkpoints');
  return rows.map((r) => ({ tx: Number(r.tx), pos: Number(r.pos) }));
}

/**
 * The server under measurement appends too: its sweeper expires the generated sessions' long-due approvals in
 * the very streams the writers are extending. Such an append goes after the server's, as a client would retry.
 */
async function appendAfterServer(store: EventStore, stream: string, batch: readonly NewEvent[], version: number) {
  try {
    return await store.append(stream, batch, { expectedVersion: version === -1 ? 'no_stream' : version });
  } catch (error) {
    if (!(error instanceof ConcurrencyError) || error.actual < version) throw error;
    return store.append(stream, batch, { expectedVersion: error.actual });
  }
}

export async function measureLag(
  store: EventStore,
  db: Db,
  source: Iterator<GeneratedSession>,
  options: { eventsPerSecond: number; seconds: number },
): Promise<LagRun> {
  const waiting: Array<{ checkpoint: Checkpoint; committedAt: number }> = [];
  const lags: number[] = [];
  let events = 0;
  let appending = true;
  // A projector that cannot keep up would never let the watcher finish: what is still waiting after this
  // long is counted with the lag it has reached so far (a lower bound).
  let drainDeadline = Number.POSITIVE_INFINITY;

  const watcher = (async () => {
    while (appending || (waiting.length > 0 && performance.now() < drainDeadline)) {
      const stored = await checkpoints(db);
      const now = performance.now();
      for (let i = waiting.length - 1; i >= 0; i--) {
        const w = waiting[i]!;
        if (stored.every((c) => compareCheckpoints(c, w.checkpoint) >= 0)) {
          lags.push(now - w.committedAt);
          waiting.splice(i, 1);
        }
      }
      await sleep(POLL_MS);
    }
    const now = performance.now();
    for (const w of waiting) lags.push(now - w.committedAt);
  })();

  // Each writer paces itself to its share of the rate, one command's events per append, session after session.
  const started = performance.now();
  const writer = async () => {
    const share = options.eventsPerSecond / WRITERS;
    let written = 0;
    while (performance.now() - started < options.seconds * 1000) {
      const next = source.next();
      if (next.done === true) break;
      let version = -1;
      for (const batch of next.value.appends) {
        const due = started + (written / share) * 1000;
        if (due > performance.now()) await sleep(due - performance.now());
        if (performance.now() - started >= options.seconds * 1000) break;
        const appended = await appendAfterServer(store, next.value.stream, batch, version);
        const committedAt = performance.now();
        version = appended.nextExpectedVersion;
        written += batch.length;
        events += batch.length;
        waiting.push({ checkpoint: appended.checkpoint, committedAt });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: WRITERS }, writer));
  } catch (error) {
    // The watcher must be done with the database before the error reaches the caller, which drops it.
    appending = false;
    drainDeadline = 0;
    await watcher.catch(() => undefined);
    throw error;
  }
  const elapsed = (performance.now() - started) / 1000;
  appending = false;
  drainDeadline = performance.now() + 60_000;
  await watcher;
  return { events, eventsPerSecond: events / elapsed, p50: percentile(lags, 50), p99: percentile(lags, 99) };
}
