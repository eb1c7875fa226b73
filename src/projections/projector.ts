// Runs a projection: reads events after its stored checkpoint, applies them and moves the checkpoint in one
// transaction, then follows the log live. Also rebuilds projections and answers how far they have got.
import type { Db } from '../adapters/db/db.ts';
import { type Checkpoint, compareCheckpoints, type EventStore, type StoredEvent } from '../commands/event-store.ts';
import {
  ensureCheckpoint,
  lockProjection,
  readCheckpoint,
  resetProjection,
  sameCheckpoint,
  type StoredCheckpoint,
  writeCheckpoint,
} from './checkpoints.ts';
import type { Projection } from './projection.ts';

export { ensureCheckpoint, resetProjection };

export interface ProjectorDeps {
  store: EventStore;
  db: Db;
}

const DEFAULT_BATCH_SIZE = 500;
// Pending means an older transaction is still open; it usually commits within milliseconds.
const PENDING_DELAY = { min: 5, max: 200 };
const ERROR_DELAY = { min: 100, max: 10_000 };
// A lost notification (LISTEN not yet established, or its connection dropped) must not stall a projector
// forever, so an idle one looks again this often even when nothing woke it.
const IDLE_RECHECK_MS = 5_000;

/** The projection's rows were written under another version: they must be rebuilt, not extended. */
export class ProjectionVersionError extends Error {
  readonly code = 'projection_version_mismatch';
  constructor(
    readonly projection: string,
    readonly stored: number,
    readonly expected: number,
  ) {
    super(`projection ${projection} is stored at version ${stored}, the code is at version ${expected}: rebuild it`);
    this.name = 'ProjectionVersionError';
  }
}

interface BatchOutcome {
  /** Events read from the store (including those of a discarded batch). */
  readonly read: number;
  readonly last: StoredEvent | null;
  readonly pending: boolean;
  /** The checkpoint moved between the read and the write, so nothing was applied. */
  readonly discarded: boolean;
}

async function currentCheckpoint(db: Db, projection: Projection): Promise<StoredCheckpoint> {
  const stored = await readCheckpoint(db, projection.name);
  if (stored) return stored;
  await ensureCheckpoint(db, projection);
  const registered = await readCheckpoint(db, projection.name);
  if (!registered) throw new Error(`projection ${projection.name}: checkpoint row missing after registering it`);
  return registered;
}

async function projectBatch(deps: ProjectorDeps, projection: Projection, batchSize: number): Promise<BatchOutcome> {
  const seen = await currentCheckpoint(deps.db, projection);
  if (seen.version !== projection.version) throw new ProjectionVersionError(projection.name, seen.version, projection.version);
  // Read outside any transaction: an open transaction with an xid would hold back pg_snapshot_xmin and stall
  // every reader of the log, and on PGlite its single connection would deadlock against the store.
  const { events, pending } = await deps.store.readAll({ after: seen.checkpoint, limit: batchSize });
  const last = events[events.length - 1];
  if (!last) return { read: 0, last: null, pending, discarded: false };
  const applied = await deps.db.transaction(async (tx) => {
    await lockProjection(tx, projection.name);
    // Another projector or a reset got here first; its rows are the truth, ours would double or resurrect.
    const now = await readCheckpoint(tx, projection.name);
    if (!now || !sameCheckpoint(now, seen)) return false;
    for (const event of events) {
      if (projection.handles.has(event.type)) await projection.apply(tx, event);
    }
    await writeCheckpoint(tx, projection.name, projection.version, last.checkpoint);
    return true;
  });
  return { read: events.length, last, pending, discarded: !applied };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs batches until the log is exhausted and no open transaction holds back events that follow. */
async function drain(deps: ProjectorDeps, projection: Projection, batchSize: number, onBatch?: (outcome: BatchOutcome) => void): Promise<void> {
  let delay = PENDING_DELAY.min;
  for (;;) {
    const outcome = await projectBatch(deps, projection, batchSize);
    onBatch?.(outcome);
    if (outcome.discarded || outcome.read === batchSize) continue;
    if (!outcome.pending) return;
    await sleep(delay);
    delay = Math.min(delay * 2, PENDING_DELAY.max);
  }
}

/** One start()..stop() cycle of the live loop: stop() and change notifications cut its pauses short. */
class Run {
  stopping = false;
  /** A change was notified since the loop last began a batch. */
  dirty = false;
  private wake: { resolve: () => void; onChange: boolean } | null = null;

  changed(): void {
    this.dirty = true;
    if (this.wake?.onChange) this.wake.resolve();
  }

  stop(): void {
    this.stopping = true;
    this.wake?.resolve();
  }

  pause(ms: number, options: { wakeOnChange: boolean }): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const finish = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      timer = setTimeout(finish, ms);
      this.wake = { resolve: finish, onChange: options.wakeOnChange };
    });
  }
}

export class Projector {
  private readonly batchSize: number;
  private readonly onError: (error: unknown) => void;
  private current: { run: Run; done: Promise<void> } | null = null;

  constructor(
    private readonly deps: ProjectorDeps,
    private readonly projection: Projection,
    options: { batchSize?: number; onError?: (error: unknown) => void } = {},
  ) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
    this.batchSize = batchSize;
    this.onError = options.onError ?? ((error) => console.error(`projector ${projection.name}:`, error));
  }

  /** Catches up from the stored checkpoint, then follows the log until stop(). Errors are reported, never thrown. */
  start(): void {
    if (this.current && !this.current.run.stopping) return;
    const run = new Run();
    // follow() catches its batches' errors itself; this only guards the process against anything else.
    this.current = { run, done: this.follow(run).catch((error: unknown) => this.report(error)) };
  }

  /** Lets the batch in flight commit (or fail), then returns with the loop ended. */
  async stop(): Promise<void> {
    const current = this.current;
    if (!current) return;
    current.run.stop();
    await current.done;
    // A start() during the wait began a new run; leave that one alone.
    if (this.current === current) this.current = null;
  }

  /** One batch; how many events it read (0: nothing to do right now). */
  async runBatch(): Promise<number> {
    return (await projectBatch(this.deps, this.projection, this.batchSize)).read;
  }

  async catchUp(): Promise<void> {
    await drain(this.deps, this.projection, this.batchSize);
  }

  private async follow(run: Run): Promise<void> {
    // An erroring notification stream must be reported, not rethrown by rxjs as an uncaught exception;
    // the idle recheck keeps the projector going without it.
    const changes = this.deps.store.changes().subscribe({ next: () => run.changed(), error: (error: unknown) => this.report(error) });
    let pendingDelay = PENDING_DELAY.min;
    let errorDelay = ERROR_DELAY.min;
    try {
      while (!run.stopping) {
        run.dirty = false;
        let outcome: BatchOutcome;
        try {
          outcome = await projectBatch(this.deps, this.projection, this.batchSize);
          errorDelay = ERROR_DELAY.min;
        } catch (error) {
          this.report(error);
          // Only stop() shortens this: new events must not turn a failing batch into a hot loop.
          await run.pause(errorDelay, { wakeOnChange: false });
          errorDelay = Math.min(errorDelay * 2, ERROR_DELAY.max);
          continue;
        }
        if (outcome.discarded || outcome.read === this.batchSize) continue;
        if (outcome.pending) {
          await run.pause(pendingDelay, { wakeOnChange: true });
          pendingDelay = Math.min(pendingDelay * 2, PENDING_DELAY.max);
          continue;
        }
        pendingDelay = PENDING_DELAY.min;
        if (!run.dirty) await run.pause(IDLE_RECHECK_MS, { wakeOnChange: true });
      }
    } finally {
      changes.unsubscribe();
    }
  }

  private report(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // A failing error reporter must not end the loop it reports on.
    }
  }
}

/** Empties the projection and replays the whole log into it under the current version. */
export async function rebuildProjection(
  deps: ProjectorDeps,
  projection: Projection,
  onProgress?: (p: { events: number; position: number }) => void,
): Promise<{ events: number }> {
  await resetProjection(deps.db, projection);
  let events = 0;
  // Counts what this rebuild applied; batches that another projector committed first are not ours to count.
  await drain(deps, projection, DEFAULT_BATCH_SIZE, (outcome) => {
    if (outcome.discarded || !outcome.last) return;
    events += outcome.read;
    onProgress?.({ events, position: outcome.last.position });
  });
  return { events };
}

export interface ProjectionStatus {
  name: string;
  /** The version the stored rows were written under. */
  version: number;
  position: number;
  checkpoint: Checkpoint;
  /** Events between the projection and the head of the log; 0 only when it has processed the head. */
  lag: number;
  updated_at: string;
}

export async function projectionStatus(deps: ProjectorDeps, projections: readonly Projection[]): Promise<ProjectionStatus[]> {
  const head = await deps.store.head();
  const statuses: ProjectionStatus[] = [];
  for (const projection of projections) {
    const stored = await currentCheckpoint(deps.db, projection);
    const { checkpoint } = stored;
    // Readers go in transaction order, so a checkpoint can sit behind the head with a higher pos than the
    // head's: compare checkpoints for "caught up", positions only for how far.
    const lag = compareCheckpoints(checkpoint, head.checkpoint) >= 0 ? 0 : Math.max(1, head.position - checkpoint.pos);
    statuses.push({ name: projection.name, version: stored.version, position: checkpoint.pos, checkpoint, lag, updated_at: stored.updatedAt });
  }
  return statuses;
}

/**
 * Read-your-writes: whether every listed projection has processed the event at `position` under the
 * current version. Position 0 (no event) asks for nothing and is always reached; a position beyond the
 * log never is.
 */
export async function hasReached(deps: ProjectorDeps, projections: readonly Projection[], position: number): Promise<boolean> {
  if (position <= 0) return true;
  const target = await deps.store.checkpointOf(position);
  if (!target) return false;
  for (const projection of projections) {
    const stored = await readCheckpoint(deps.db, projection.name);
    if (!stored || stored.version !== projection.version || compareCheckpoints(stored.checkpoint, target) < 0) return false;
  }
  return true;
}
