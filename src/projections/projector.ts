// Runs a projection: reads events after its stored checkpoint, applies them and moves the checkpoint in one
// transaction, then follows the log live. Also rebuilds projections into shadow tables and swaps them in,
// and answers how far each has got.
import type { Db, Queryable, Statement, Transaction } from '../ports/db.ts';
import { type Checkpoint, compareCheckpoints, type EventStore, type LogInDatabase, type ProjectedEvent, type ReadAllResult } from '../ports/event-store.ts';
import {
  ensureCheckpoint,
  livePositionSql,
  lockProjection,
  checkpointsOf,
  expectPlaces,
  lockProjections,
  READ_CHECKPOINTS,
  moveCheckpoint,
  readCheckpoint,
  readCheckpoints,
  resetProjection,
  type StoredCheckpoint,
  writeCheckpoint,
  writeCheckpoints,
} from './checkpoints.ts';
import type { Projection } from './projection.ts';
import { readsFor, sendAhead } from './read-ahead.ts';
import { placeKey, RowCache, type RowCacheView, withRowCache } from './row-cache.ts';
import { advanceRebuild, beginRebuild, dropRetired, enterShadow, indexShadow, lockRebuild, readRebuild, readRebuilds, swapShadow } from './shadow.ts';
import { DEFAULT_REBUILD_BATCH_SIZE } from './rebuild-defaults.ts';

export { ensureCheckpoint, resetProjection };

export interface ProjectorDeps {
  store: EventStore;
  db: Db;
}

const DEFAULT_BATCH_SIZE = 500;
export { DEFAULT_REBUILD_BATCH_SIZE };
// Pending means an older transaction is still open; it usually commits within milliseconds.
// Short, so that under a steady stream of appends (one nearly always open) the lag stays in milliseconds.
const PENDING_DELAY = { min: 2, max: 50 };
const ERROR_DELAY = { min: 100, max: 10_000 };
// A lost notification (LISTEN not yet established, or its connection dropped) must not stall a projector
// forever, so an idle one looks again this often even when nothing woke it.
const IDLE_RECHECK_MS = 5_000;
const SWAP_RETRY_MS = 100;

/** A rebuild's shadow rows were written under another version than this code's: they must be started again, not extended. */
export class ProjectionVersionError extends Error {
  readonly code = 'projection_version_mismatch';
  constructor(
    readonly projection: string,
    readonly stored: number,
    readonly expected: number,
  ) {
    super(`projection ${projection} is being rebuilt at version ${stored}, this code is at version ${expected}: restart the rebuild`);
    this.name = 'ProjectionVersionError';
  }
}

interface BatchOutcome {
  /** Events read from the store (including those of a discarded batch). */
  readonly read: number;
  readonly last: ProjectedEvent | null;
  readonly pending: boolean;
  /** The checkpoint moved between the read and the write, so nothing was applied. */
  readonly discarded: boolean;
  /** Where the track stands after the batch, as far as this batch knows (null when discarded or gone). */
  readonly reached: Place | null;
}

/** Where a track of rows stands: the version its rows are built under and the last event they hold. */
interface Place {
  readonly version: number;
  readonly checkpoint: Checkpoint;
}

/** The rows a batch extends: the live tables, or the shadow tables of a rebuild. */
interface Track {
  readonly projection: Projection;
  /** Where the rows stand; null when the track is gone (a rebuild swapped in or dropped by another process). */
  place(db: Queryable): Promise<Place | null>;
  /**
   * Serialises the track's writers across processes until the transaction ends, and lets the transaction
   * commit without waiting for the WAL flush (one statement).
   */
  lock(tx: Queryable): Promise<void>;
  /** Points the projection's SQL at the track's tables for the rest of the transaction. */
  enter(tx: Queryable): Promise<void>;
  advance(tx: Queryable, seen: Place, checkpoint: Checkpoint, read: number): Promise<void>;
  /**
   * Moves the track from `seen` past events it has nothing to apply for, in one statement without a
   * transaction; false when it stands elsewhere. Tracks without it take the transaction like any batch.
   */
  readonly skip?: (db: Queryable, seen: Place, checkpoint: Checkpoint) => Promise<boolean>;
}

const samePlace = (a: Place, b: Place) => a.version === b.version && a.checkpoint.tx === b.checkpoint.tx && a.checkpoint.pos === b.checkpoint.pos;

/**
 * The live tables. They follow the log with the running code even while their stored version differs
 * (a rebuild under the new version is then under way in shadow tables), so reads stay fresh until the swap.
 */
function liveTrack(projection: Projection): Track {
  return {
    projection,
    place: async (db) => (await readCheckpoint(db, projection.name)) ?? (await registered(db, projection)),
    lock: (tx) => lockProjection(tx, projection.name, { asyncCommit: true }),
    enter: () => Promise.resolve(),
    advance: (tx, seen, checkpoint) => writeCheckpoint(tx, projection.name, seen.version, checkpoint),
    skip: (db, seen, checkpoint) => moveCheckpoint(db, projection.name, seen, checkpoint),
  };
}

/** The shadow tables of the rebuild under way; refuses to extend a shadow built under another version. */
function shadowTrack(projection: Projection): Track {
  return {
    projection,
    async place(db) {
      const state = await readRebuild(db, projection.name);
      if (state && state.version !== projection.version) throw new ProjectionVersionError(projection.name, state.version, projection.version);
      return state;
    },
    lock: (tx) => lockRebuild(tx, projection.name, { asyncCommit: true }),
    enter: (tx) => enterShadow(tx, projection),
    advance: (tx, _seen, checkpoint, read) => advanceRebuild(tx, projection.name, checkpoint, read),
  };
}

async function registered(db: Queryable, projection: Projection): Promise<StoredCheckpoint> {
  await ensureCheckpoint(db, projection);
  const stored = await readCheckpoint(db, projection.name);
  if (!stored) throw new Error(`projection ${projection.name}: checkpoint row missing after registering it`);
  return stored;
}

/** The track is gone: its rows were swapped in, or thrown away, by another process. */
const GONE: BatchOutcome = { read: 0, last: null, pending: false, discarded: true, reached: null };

/**
 * One batch from where the track stands: `known` (what the previous batch reached: one statement fewer a
 * batch) or its stored place. A stale `known` costs nothing but a discarded batch: the transaction checks the
 * stored place before it writes.
 */
async function projectBatch(deps: ProjectorDeps, track: Track, batchSize: number, known: Place | null = null): Promise<BatchOutcome> {
  const seen = known ?? (await track.place(deps.db));
  if (!seen) return GONE;
  // Read outside any transaction: an open transaction with an xid would hold back pg_snapshot_xmin and stall
  // every reader of the log, and on PGlite its single connection would deadlock against the store.
  const { events, pending } = await deps.store.readAllProjected({ after: seen.checkpoint, limit: batchSize });
  const last = events[events.length - 1];
  if (!last) return { read: 0, last: null, pending, discarded: false, reached: seen };
  const applied = await applyToTrack(deps, track, seen, events);
  return { read: events.length, last, pending, discarded: !applied, reached: applied ? { version: seen.version, checkpoint: last.checkpoint } : null };
}

/**
 * Applies `events` (the log right after `seen`, in order) to the track's rows and moves its checkpoint past
 * them, in one transaction; false when the track moved or went meanwhile, and nothing was applied.
 */
async function applyToTrack(deps: ProjectorDeps, track: Track, seen: Place, events: readonly ProjectedEvent[]): Promise<boolean> {
  const { projection } = track;
  const last = events[events.length - 1]!;
  const handled = events.filter((event) => projection.handles.has(event.type));
  // Most appends concern some projections only; the others just move on (one statement where a batch takes
  // five, for each of them after every append).
  if (handled.length === 0 && track.skip) return track.skip(deps.db, seen, last.checkpoint);
  return deps.db.transaction(async (tx) => {
    // Rows and checkpoint commit together, and both derive from the log: a commit lost in a database crash
    // loses them together and the events are applied again. So the batch need not wait for the WAL flush
    // (the lock's statement turns it off).
    await track.lock(tx);
    // Another projector, a reset or a swap got here first; its rows are the truth, ours would double or resurrect.
    const now = await track.place(tx);
    if (!now || !samePlace(now, seen)) return false;
    await track.enter(tx);
    if (handled.length > 0) await projection.applyBatch(tx, handled);
    await track.advance(tx, seen, last.checkpoint, events.length);
    return true;
  });
}

/** The events of a batch after `checkpoint`: usually all of them; a track that was ahead skips its first ones. */
const eventsAfter = (events: readonly ProjectedEvent[], checkpoint: Checkpoint): readonly ProjectedEvent[] =>
  compareCheckpoints(events[0]!.checkpoint, checkpoint) > 0 ? events : events.filter((event) => compareCheckpoints(event.checkpoint, checkpoint) > 0);

/**
 * Several tracks through the log in one pass: each batch is read once, from the track furthest behind, and
 * applied to every track it extends, each in its own transaction and all at once (on PostgreSQL they run on
 * separate connections, side by side). While a full batch is applied the next one is already being read (the
 * read is a fifth of a batch's time, and it need not wait for the writes: only the tracks' places decide whether
 * it is used). Returns when the log is exhausted or every track is gone.
 */
async function drainTogether(
  deps: ProjectorDeps,
  tracks: readonly Track[],
  batchSize: number,
  options: { onBatch?: (track: Track, outcome: BatchOutcome) => void; signal?: AbortSignal } = {},
): Promise<void> {
  let delay = PENDING_DELAY.min;
  let ahead: { after: Checkpoint; page: Promise<ReadAllResult<ProjectedEvent>> } | null = null;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const places = await Promise.all(tracks.map(async (track) => ({ track, seen: await track.place(deps.db) })));
      const present = places.filter((p): p is { track: Track; seen: Place } => p.seen !== null);
      if (present.length === 0) return;
      const from = present.map((p) => p.seen.checkpoint).reduce((a, b) => (compareCheckpoints(a, b) <= 0 ? a : b));
      // The page read ahead serves if every track got where the previous batch took it (one that was reset or
      // moved meanwhile is read for afresh, once that read is over); a page read earlier is as valid as one
      // read now, only shorter.
      let read: Promise<ReadAllResult<ProjectedEvent>>;
      if (ahead !== null && compareCheckpoints(ahead.after, from) === 0) {
        read = ahead.page;
      } else {
        await ahead?.page.catch(() => {});
        read = deps.store.readAllProjected({ after: from, limit: batchSize });
      }
      ahead = null;
      const { events, pending }: ReadAllResult<ProjectedEvent> = await read;
      const last = events[events.length - 1];
      if (last && events.length === batchSize) {
        ahead = { after: last.checkpoint, page: deps.store.readAllProjected({ after: last.checkpoint, limit: batchSize }) };
        // Awaited when used, or below when the loop ends first; never an unhandled rejection meanwhile.
        ahead.page.catch(() => {});
      }
      if (last) {
        await Promise.all(
          present.map(async ({ track, seen }) => {
            const mine = eventsAfter(events, seen.checkpoint);
            if (mine.length === 0) return;
            const applied = await applyToTrack(deps, track, seen, mine);
            options.onBatch?.(track, { read: mine.length, last, pending, discarded: !applied, reached: null });
          }),
        );
      }
      if (events.length === batchSize) continue;
      if (!pending) return;
      await sleep(delay);
      delay = Math.min(delay * 2, PENDING_DELAY.max);
    }
  } finally {
    // A read still in flight when the pass ends (or fails) holds a connection: let it finish before returning.
    await ahead?.page.catch(() => {});
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs batches until the log is exhausted and no open transaction holds back events that follow (or the track goes). */
async function drain(deps: ProjectorDeps, track: Track, batchSize: number, options: { onBatch?: (outcome: BatchOutcome) => void; signal?: AbortSignal } = {}): Promise<void> {
  let delay = PENDING_DELAY.min;
  let known: Place | null = null;
  for (;;) {
    options.signal?.throwIfAborted();
    const outcome = await projectBatch(deps, track, batchSize, known);
    if (outcome === GONE) return;
    known = outcome.reached;
    options.onBatch?.(outcome);
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

/** Stops the run and waits for its loop to end (the batch in flight commits or fails first). */
async function ended(current: { run: Run; done: Promise<void> } | null): Promise<void> {
  if (!current) return;
  current.run.stop();
  await current.done;
}

export interface ProjectorOptions {
  readonly batchSize?: number;
  readonly onError?: (error: unknown) => void;
  readonly idleRecheckMs?: number;
  /** Told where the live rows stand after each batch that moved them on (read-your-writes waits end then). */
  readonly onApplied?: (checkpoint: Checkpoint) => void;
}

export class Projector {
  private readonly batchSize: number;
  private readonly idleRecheckMs: number;
  private readonly track: Track;
  private readonly onError: (error: unknown) => void;
  private readonly onApplied: (checkpoint: Checkpoint) => void;
  private current: { run: Run; done: Promise<void> } | null = null;

  constructor(
    private readonly deps: ProjectorDeps,
    private readonly projection: Projection,
    options: ProjectorOptions = {},
  ) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
    this.batchSize = batchSize;
    this.idleRecheckMs = options.idleRecheckMs ?? IDLE_RECHECK_MS;
    this.track = liveTrack(projection);
    this.onError = options.onError ?? ((error) => console.error(`projector ${projection.name}:`, error));
    this.onApplied = options.onApplied ?? (() => {});
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
    await ended(current);
    // A start() during the wait began a new run; leave that one alone.
    if (this.current === current) this.current = null;
  }

  /** One batch; how many events it read (0: nothing to do right now). */
  async runBatch(): Promise<number> {
    return (await projectBatch(this.deps, this.track, this.batchSize)).read;
  }

  async catchUp(): Promise<void> {
    await drain(this.deps, this.track, this.batchSize);
  }

  private async follow(run: Run): Promise<void> {
    // An erroring notification stream must be reported, not rethrown by rxjs as an uncaught exception;
    // the idle recheck keeps the projector going without it.
    const changes = this.deps.store.changes().subscribe({ next: () => run.changed(), error: (error: unknown) => this.report(error) });
    let pendingDelay = PENDING_DELAY.min;
    let errorDelay = ERROR_DELAY.min;
    // Where the previous batch left the track; forgotten on anything unusual, and whenever the loop has been
    // idle, so that a reset or a swap by another process is seen by the idle recheck even with no new events.
    let known: Place | null = null;
    try {
      while (!run.stopping) {
        run.dirty = false;
        let outcome: BatchOutcome;
        try {
          outcome = await projectBatch(this.deps, this.track, this.batchSize, known);
          known = outcome.reached;
          errorDelay = ERROR_DELAY.min;
        } catch (error) {
          known = null;
          this.report(error);
          // Only stop() shortens this: new events must not turn a failing batch into a hot loop.
          await run.pause(errorDelay, { wakeOnChange: false });
          errorDelay = Math.min(errorDelay * 2, ERROR_DELAY.max);
          continue;
        }
        if (outcome.last !== null && !outcome.discarded) this.onApplied(outcome.last.checkpoint);
        if (outcome.discarded || outcome.read === this.batchSize) continue;
        if (outcome.pending) {
          await run.pause(pendingDelay, { wakeOnChange: true });
          // Back off only while nothing moves: under steady appends an appender is nearly always open, and a
          // batch that made progress must not make the next one wait longer.
          pendingDelay = outcome.read > 0 ? PENDING_DELAY.min : Math.min(pendingDelay * 2, PENDING_DELAY.max);
          continue;
        }
        pendingDelay = PENDING_DELAY.min;
        if (!run.dirty) {
          await run.pause(this.idleRecheckMs, { wakeOnChange: true });
          if (!run.dirty) known = null;
        }
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

export interface GroupMemberHooks {
  /** Told where the projection's live rows stand after each batch that moved them on. */
  readonly onApplied?: (checkpoint: Checkpoint) => void;
  /** Told of an error that concerns the projection alone (it is then retried on its own, after a pause). */
  readonly onError?: (error: unknown) => void;
}

interface Member extends GroupMemberHooks {
  readonly projection: Projection;
  readonly track: Track;
  /** Where the previous batch left it; null: read it again. */
  known: Place | null;
  /** The rows its batches loaded and wrote, of the place the last one committed (row-cache.ts). */
  readonly rows: RowCache;
  /** The cache view of the batch in flight, committed into `rows` if the batch commits. */
  staged: RowCacheView | null;
  /** After an error of its own it sits out until then, backing off, while the others go on. */
  retryAt: number;
  errorDelay: number;
}

interface Work {
  readonly member: Member;
  readonly seen: Place;
  /** The batch's events after `seen`. */
  readonly mine: readonly ProjectedEvent[];
}

interface GroupOutcome {
  readonly read: number;
  readonly pending: boolean;
  /** A member's batch was discarded (another writer moved its checkpoint): look again at once. */
  readonly discarded: boolean;
  /** Events the batch left for the next can be read already (applyGuessed's page was the start of one): at once. */
  readonly more?: boolean;
}

const NOTHING: GroupOutcome = { read: 0, pending: false, discarded: false };

/** Each member's part of a page: the events after where it was seen, for those that have any. */
function workOf(members: readonly { member: Member; seen: Place }[], events: readonly ProjectedEvent[]): Work[] {
  const work: Work[] = [];
  for (const { member, seen } of members) {
    const mine = eventsAfter(events, seen.checkpoint);
    if (mine.length > 0) work.push({ member, seen, mine });
  }
  return work;
}

/** Whether the member has rows to write for its share of the batch. */
const handlesAny = (w: Work): boolean => w.mine.some((event) => w.member.projection.handles.has(event.type));

/**
 * The live projectors of one process as one loop: each batch of the log is read once and applied to every
 * projection this process leads (join .. leave). A live batch goes to all of them in one transaction of two
 * round trips (applyTogether): one opens it with their locks, their checkpoints and their reads, one sends their
 * writes and their checkpoints with COMMIT, where a transaction a projection cost seven statements each. A full
 * batch (catching up) and a batch whose shared transaction failed go a transaction a projection, side by side
 * on the pool's connections: an error is then its own projection's, which backs off alone while the others go
 * on.
 */
export class ProjectorGroup {
  private readonly batchSize: number;
  private readonly idleRecheckMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly members = new Map<string, Member>();
  private current: { run: Run; done: Promise<void> } | null = null;
  /** The batch in flight: leave() lets it commit (or fail) before the lead is handed back. */
  private inFlight: Promise<unknown> = Promise.resolve();
  /** The last page read was not full: the group is following the log's head, not catching up. */
  private live = false;
  /** Live batches still to go the two-round-trip way before applyGuessed is tried again, and its misses in a row. */
  private guessRest = 0;
  private guessMisses = 0;
  /** Since start: live batches committed in one round trip (applyGuessed), and tries that went the other way. */
  readonly guesses = { committed: 0, missed: 0 };

  constructor(
    private readonly deps: ProjectorDeps,
    options: { batchSize?: number; idleRecheckMs?: number; onError?: (error: unknown) => void } = {},
  ) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
    this.batchSize = batchSize;
    this.idleRecheckMs = options.idleRecheckMs ?? IDLE_RECHECK_MS;
    this.onError = options.onError ?? ((error) => console.error('projectors:', error));
  }

  /** The projections in the group now. */
  get names(): string[] {
    return [...this.members.keys()];
  }

  /** Starts applying the log to the projection's live rows from its stored checkpoint, with the others. */
  join(projection: Projection, hooks: GroupMemberHooks = {}): void {
    if (this.members.has(projection.name)) throw new Error(`projection ${projection.name} is already in the group`);
    this.members.set(projection.name, { ...hooks, projection, track: liveTrack(projection), known: null, rows: new RowCache(), staged: null, retryAt: 0, errorDelay: ERROR_DELAY.min });
    if (this.current && !this.current.run.stopping) {
      this.current.run.changed();
      return;
    }
    const run = new Run();
    this.current = { run, done: this.follow(run).catch((error: unknown) => this.report(this.onError, error)) };
  }

  /** Stops applying the log to the projection: the batch in flight commits (or fails) before this returns. */
  async leave(name: string): Promise<void> {
    if (!this.members.delete(name)) return;
    await this.inFlight;
    if (this.members.size === 0) await this.stop();
  }

  /** Ends the loop (the batch in flight first); members stay, and a join starts it again. */
  async stop(): Promise<void> {
    const current = this.current;
    await ended(current);
    // A join during the wait began a new run; leave that one alone.
    if (this.current === current) this.current = null;
  }

  private async follow(run: Run): Promise<void> {
    const changes = this.deps.store.changes().subscribe({ next: () => run.changed(), error: (error: unknown) => this.report(this.onError, error) });
    let pendingDelay = PENDING_DELAY.min;
    let errorDelay = ERROR_DELAY.min;
    try {
      // Members joining in the same turn of the event loop start with the same batch.
      await Promise.resolve();
      while (!run.stopping) {
        run.dirty = false;
        const now = Date.now();
        const ready = [...this.members.values()].filter((m) => m.retryAt <= now);
        // Taken with the members of this instant (a leave() from here on waits for it).
        const batch = this.batchOf(ready);
        this.inFlight = batch.catch(() => {});
        let outcome: GroupOutcome;
        try {
          outcome = await batch;
          errorDelay = ERROR_DELAY.min;
        } catch (error) {
          // Reading the checkpoints or the log failed: the whole group waits, as one projector would.
          for (const member of ready) member.known = null;
          this.report(this.onError, error);
          await run.pause(errorDelay, { wakeOnChange: false });
          errorDelay = Math.min(errorDelay * 2, ERROR_DELAY.max);
          continue;
        }
        if (outcome.discarded || outcome.more === true || outcome.read === this.batchSize) continue;
        // A member sitting out an error is looked at again when its pause is over, not only on a change.
        const later = Date.now();
        const untilRetry = Math.max(0, Math.min(...[...this.members.values()].filter((m) => m.retryAt > later).map((m) => m.retryAt - later)));
        if (outcome.pending) {
          await run.pause(Math.min(pendingDelay, untilRetry), { wakeOnChange: true });
          pendingDelay = outcome.read > 0 ? PENDING_DELAY.min : Math.min(pendingDelay * 2, PENDING_DELAY.max);
          continue;
        }
        pendingDelay = PENDING_DELAY.min;
        if (ready.length === 0 && this.members.size > 0) {
          // Every member is sitting out an error: new events must not make that a hot loop.
          await run.pause(untilRetry, { wakeOnChange: false });
          continue;
        }
        if (!run.dirty) {
          await run.pause(Math.min(this.idleRecheckMs, untilRetry), { wakeOnChange: true });
          // Idle: a reset or a swap by another process is seen by the next look, even with no new events.
          if (!run.dirty) for (const member of this.members.values()) member.known = null;
        }
      }
    } finally {
      changes.unsubscribe();
    }
  }

  private async batchOf(members: readonly Member[]): Promise<GroupOutcome> {
    if (members.length === 0) return NOTHING;
    for (const member of members) member.staged = null;
    const unknown = members.filter((m) => m.known === null);
    if (unknown.length > 0) {
      const stored = await readCheckpoints(this.deps.db);
      for (const member of unknown) {
        const place = stored.get(member.projection.name) ?? (await registered(this.deps.db, member.projection));
        member.known = { version: place.version, checkpoint: place.checkpoint };
      }
    }
    const places = members.map((m) => m.known!);
    const from = places.map((p) => p.checkpoint).reduce((a, b) => (compareCheckpoints(a, b) <= 0 ? a : b));
    // A live batch is read inside the transaction that applies it, when the log is in the same database: the read
    // then shares the transaction's first round trip, and so do the reads its events call for when they are the
    // ones this process just appended (readAndApply); before that, when those events can be worked out without a
    // read, the writes go in the first round trip too (applyGuessed).
    const log = this.live ? (this.deps.store.logIn?.(this.deps.db) ?? null) : null;
    const placed = members.map((member, i) => ({ member, seen: places[i]! }));
    const read = log
      ? ((await this.applyGuessed(log, placed, from)) ?? (await readAndApply(this.deps, log, placed, from, this.batchSize)))
      : { ...(await this.deps.store.readAllProjected({ after: from, limit: this.batchSize })), outcomes: null, failure: null };
    const { events, pending } = read;
    this.live = events.length < this.batchSize;
    const last = events[events.length - 1];
    if (!last) return { read: 0, pending, discarded: false };
    const work = workOf(placed, events);
    // A live batch goes to every member in one transaction: two round trips (see applyTogether) whether it holds
    // one event or many, and one BEGIN … COMMIT for all where each would take its own. A full batch (catching up)
    // goes to each on its own: side by side on PostgreSQL, and on the embedded database shorter waits for the
    // readers behind it.
    let outcomes: Map<Member, 'applied' | 'discarded' | 'failed'> | null = read.outcomes;
    if (outcomes === null) {
      let failure = read.failure;
      if (failure === null && events.length < this.batchSize && work.length > 1 && work.some(handlesAny)) {
        try {
          outcomes = await applyTogether(this.deps, work, last.checkpoint);
        } catch (error) {
          failure = error ?? new Error('the shared transaction failed');
        }
      }
      if (outcomes === null) {
        outcomes = await this.eachAlone(work, last.checkpoint);
        // The shared transaction failed where each on its own did not: a conflict of the moment, worth a word.
        if (failure !== null && ![...outcomes.values()].includes('failed')) this.report(this.onError, failure);
      }
    }
    let discarded = false;
    for (const { member, seen } of work) {
      const outcome = outcomes.get(member);
      const staged = member.staged;
      member.staged = null;
      if (outcome === 'applied') {
        member.known = { version: seen.version, checkpoint: last.checkpoint };
        member.rows.committed(placeKey(seen), placeKey(member.known), staged);
        member.errorDelay = ERROR_DELAY.min;
        member.onApplied?.(last.checkpoint);
      } else {
        member.known = null;
        member.rows.clear();
        discarded ||= outcome === 'discarded';
      }
    }
    return { read: events.length, pending, discarded, more: read.more === true };
  }

  /**
   * applyGuessed, unless it missed lately: after a miss (another process appends to the same log, say) it rests
   * for twice as many live batches as the last time, up to GUESS_REST_MAX, so that a guess that keeps missing
   * costs a round trip now and then rather than every batch. A batch that needed a read (a session's first
   * event, say) costs no round trip and no rest.
   */
  private async applyGuessed(log: LogInDatabase, members: readonly { member: Member; seen: Place }[], from: Checkpoint): Promise<ReadAndApplied | null> {
    if (this.guessRest > 0) {
      this.guessRest -= 1;
      return null;
    }
    const outcome = await applyGuessed(this.deps, log, members, from, this.batchSize);
    if (outcome === 'needs a read') {
      // This batch's rows, not the guess: the next may well go.
      this.guesses.missed += 1;
      return null;
    }
    if (outcome === 'missed') {
      this.guesses.missed += 1;
      this.guessMisses += 1;
      this.guessRest = Math.min(2 ** this.guessMisses, GUESS_REST_MAX);
      return null;
    }
    if (outcome !== null) {
      this.guesses.committed += 1;
      this.guessMisses = 0;
    }
    return outcome;
  }

  /** Each member's events in a transaction of its own, all at once; an error is its member's, who backs off. */
  private async eachAlone(work: readonly Work[], to: Checkpoint): Promise<Map<Member, 'applied' | 'discarded' | 'failed'>> {
    const outcomes = await Promise.all(
      work.map(async (w) => {
        try {
          // Rows to write: a transaction of its own, opened and closed in a round trip each. Nothing to write:
          // a move of the checkpoint, in one statement with the other members' moves.
          if (handlesAny(w)) return (await applyTogether(this.deps, [w], to)).get(w.member)!;
          return (await applyToTrack(this.deps, w.member.track, w.seen, w.mine)) ? 'applied' : 'discarded';
        } catch (error) {
          w.member.retryAt = Date.now() + w.member.errorDelay;
          w.member.errorDelay = Math.min(w.member.errorDelay * 2, ERROR_DELAY.max);
          this.report(w.member.onError ?? this.onError, error);
          return 'failed';
        }
      }),
    );
    return new Map(work.map((w, i) => [w.member, outcomes[i]!]));
  }

  private report(to: (error: unknown) => void, error: unknown): void {
    try {
      to(error);
    } catch {
      // A failing error reporter must not end the loop it reports on.
    }
  }
}

/** Thrown inside a group's transaction to roll it back: another writer moved a member meanwhile. */
class MemberMoved extends Error {}

/**
 * Inside a group's transaction, once the stored checkpoints are known: every member's events applied (on the
 * transaction `txOf` gives it), and their checkpoints moved to `to` by a statement sent behind their writes. A
 * member another writer moved meanwhile (a reset, a swap) rolls everything back (MemberMoved).
 */
async function applyInside(tx: Transaction, work: readonly Work[], storedRows: Promise<Record<string, unknown>[]>, to: Checkpoint, txOf: (member: Member) => Transaction = () => tx): Promise<Map<Member, 'applied'>> {
  // Every member's work ends before the transaction does, even when one fails: none may use it after.
  const settled = await Promise.allSettled([
    storedRows,
    ...work.map(({ member, seen, mine }) => {
      const handled = mine.filter((event) => member.projection.handles.has(event.type));
      // This attempt's view only: one of a failed attempt before it must never be committed.
      member.staged = handled.length === 0 ? null : member.rows.view(placeKey(seen));
      return member.staged === null ? undefined : member.projection.applyBatch(withRowCache(txOf(member), member.staged), handled);
    }),
  ]);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const stored = checkpointsOf((settled[0] as PromiseFulfilledResult<Record<string, unknown>[]>).value);
  const moved = work.some(({ member, seen }) => {
    const now = stored.get(member.projection.name);
    return now === undefined || !samePlace({ version: now.version, checkpoint: now.checkpoint }, seen);
  });
  if (moved) throw new MemberMoved();
  writeCheckpoints(tx, work.map(({ member, seen }) => ({ name: member.projection.name, version: seen.version, checkpoint: to })));
  return new Map(work.map((w) => [w.member, 'applied' as const]));
}

/**
 * Every member's events in one transaction, in two round trips on PostgreSQL: BEGIN, the lock of every member,
 * the read of where they stand and the members' own reads go out together; then the members' writes (sent, not
 * waited for) and the move of their checkpoints to `to` go with COMMIT. So the rows are worked out before the
 * stored places are known: when another writer moved a member meanwhile (a reset, a swap), nothing commits and
 * every member is 'discarded', to be read afresh.
 */
async function applyTogether(deps: ProjectorDeps, work: readonly Work[], to: Checkpoint): Promise<Map<Member, 'applied' | 'discarded'>> {
  try {
    return await deps.db.transaction((tx, opened) => applyInside(tx, work, opened, to), {
      opening: [lockProjections(work.map((w) => w.member.projection.name)), READ_CHECKPOINTS],
    });
  } catch (error) {
    if (error instanceof MemberMoved) return new Map(work.map((w) => [w.member, 'discarded' as const]));
    throw error;
  }
}

/** The most live batches applyGuessed rests for after misses in a row. */
const GUESS_REST_MAX = 64;

/** A transaction that records what is sent on it and answers no query: a batch worked out from cached rows alone. */
class NeedsARead extends Error {}
function recording(): { tx: Transaction; sent: Statement[] } {
  const sent: Statement[] = [];
  const tx: Transaction = {
    query: () => Promise.reject(new NeedsARead()),
    exec: () => Promise.reject(new NeedsARead()),
    send: (sql, params, options) => void sent.push({ sql, ...(params !== undefined && { params }), ...(options !== undefined && { options }) }),
  };
  return { tx, sent };
}

/**
 * A live batch in one round trip, when it can be worked out before anything is read: the page is guessed to be
 * the events this process appended since `from` (LogInDatabase.guessed, as a read would give them), and every
 * member works its part out from the rows its cache holds (a member that needs a read makes this give up,
 * before anything is sent). Then BEGIN, the members' locks, the check that each stands where it was seen, the
 * check that the log after `from` begins with exactly the guessed events (what follows them is the next batch's:
 * `more`), the members' writes, their checkpoints' move and COMMIT go out together. A check that fails fails the
 * transaction: nothing commits, and the batch goes the two-round-trip way (readAndApply) — 'missed'; so does one
 * a member cannot work out without a read (or fails on, to fail again there and be reported), before anything
 * is sent — 'needs a read'. Null: not tried (PostgreSQL only: on the embedded database a round trip
 * costs next to nothing).
 */
async function applyGuessed(
  deps: ProjectorDeps,
  log: LogInDatabase,
  members: readonly { member: Member; seen: Place }[],
  from: Checkpoint,
  limit: number,
): Promise<ReadAndApplied | 'missed' | 'needs a read' | null> {
  if (deps.db.kind !== 'postgres' || !log.guessed) return null;
  const page = log.guessed(from, limit);
  const last = page?.events[page.events.length - 1];
  if (!page || !last) return null;
  const work = workOf(members, page.events);
  if (work.length === 0) return null;
  const sent = new Map<Member, Statement[]>();
  const settled = await Promise.allSettled(
    work.map(async ({ member, seen, mine }) => {
      const handled = mine.filter((event) => member.projection.handles.has(event.type));
      member.staged = handled.length === 0 ? null : member.rows.view(placeKey(seen));
      if (member.staged === null) return;
      const recorder = recording();
      sent.set(member, recorder.sent);
      await member.projection.applyBatch(withRowCache(recorder.tx, member.staged), handled);
    }),
  );
  const discard = () => {
    for (const { member } of work) member.staged = null;
  };
  if (settled.some((outcome) => outcome.status === 'rejected')) {
    discard();
    return 'needs a read';
  }
  let opened: Promise<Record<string, unknown>[]> = Promise.resolve([]);
  const places = work.map(({ member, seen }) => ({ name: member.projection.name, version: seen.version, checkpoint: seen.checkpoint }));
  try {
    await deps.db.transaction(
      async (tx, answers) => {
        opened = answers;
        for (const statements of sent.values()) for (const { sql, params, options } of statements) tx.send(sql, params, options);
        writeCheckpoints(tx, places.map((place) => ({ ...place, checkpoint: last.checkpoint })));
      },
      { opening: [lockProjections(places.map((place) => place.name)), expectPlaces(places), page.expect] },
    );
  } catch {
    // Whatever failed (a check, or a write the two-round-trip way will meet and report again), nothing committed.
    discard();
    return 'missed';
  }
  const [row] = await opened;
  const outcomes = new Map(work.map(({ member }) => [member, 'applied' as const]));
  return { events: page.events, pending: row?.pending === true, more: row?.more === true, outcomes, failure: null };
}

interface ReadAndApplied extends ReadAllResult<ProjectedEvent> {
  /** Null: the page was not applied here (it was empty or full, or the transaction failed). */
  readonly outcomes: Map<Member, 'applied' | 'discarded'> | null;
  /** Why the transaction failed after the page was read (its events are to go to each member alone); else null. */
  readonly failure: unknown;
  /** The page was the start of what could be read (applyGuessed). */
  readonly more?: boolean;
}

/**
 * A live batch read and applied in one transaction: BEGIN, the members' locks, their checkpoints, the read of the
 * log after `from` and the reads the members will make for the events this process appended since (a guess:
 * read-ahead.ts) go out together; the writes, the checkpoints and COMMIT follow once the page is in. A lone
 * command's events thus reach the read models in two round trips after their append, where a read of the log
 * before the transaction took a third. A page that is empty or full (catching up) is only read here, and left
 * to the caller, as is one whose transaction failed (nothing of it committed).
 */
async function readAndApply(
  deps: ProjectorDeps,
  log: LogInDatabase,
  members: readonly { member: Member; seen: Place }[],
  from: Checkpoint,
  limit: number,
): Promise<ReadAndApplied> {
  const guess = log.appendedAfter(from);
  const ahead = new Map(
    members.map(({ member, seen }) => [
      member,
      guess.length === 0 ? [] : readsFor(member.projection, eventsAfter(guess, seen.checkpoint), (recorder) => withRowCache(recorder, member.rows.view(placeKey(seen), { guess: true }))),
    ]),
  );
  let page: ReadAllResult<ProjectedEvent> | null = null;
  try {
    const outcomes = await deps.db.transaction(
      async (tx, opened) => {
        const reading = log.readAllProjectedOn(tx, { after: from, limit });
        const txs = new Map(members.map(({ member }) => [member, sendAhead(tx, ahead.get(member) ?? [])]));
        page = await reading;
        const last = page.events[page.events.length - 1];
        if (!last || page.events.length >= limit) {
          await opened;
          return null;
        }
        return applyInside(tx, workOf(members, page.events), opened, last.checkpoint, (member) => txs.get(member)!);
      },
      { opening: [lockProjections(members.map(({ member }) => member.projection.name)), READ_CHECKPOINTS] },
    );
    return { ...page!, outcomes, failure: null };
  } catch (error) {
    if (page === null) throw error;
    const read: ReadAllResult<ProjectedEvent> = page;
    if (error instanceof MemberMoved) {
      const discarded = new Map(members.filter(({ seen }) => eventsAfter(read.events, seen.checkpoint).length > 0).map(({ member }) => [member, 'discarded' as const]));
      return { ...read, outcomes: discarded, failure: null };
    }
    return { ...read, outcomes: null, failure: error ?? new Error('the shared transaction failed') };
  }
}

export interface RebuildProgress {
  /** Events read into the shadow tables so far (including before a resumption). */
  readonly events: number;
  /** Position of the last event the shadow tables hold. */
  readonly position: number;
}

export interface RebuildOptions {
  /** Throw away a rebuild under way for this version and start again from the first event. */
  readonly restart?: boolean;
  /** Stops the rebuild between batches; what it built so far stays and is resumed next time. */
  readonly signal?: AbortSignal;
  readonly batchSize?: number;
}

export interface RebuildResult {
  /** Events the rebuilt tables were built from. */
  readonly events: number;
  /** Position the rebuild resumed from, when it took over one that had been stopped. */
  readonly resumedFrom: number | null;
  /** False when another process swapped the same rebuild in first. */
  readonly swapped: boolean;
}

/**
 * Rebuilds the projection from the first event into shadow tables while the live ones keep answering (and
 * keep following the log), then swaps them in atomically once they have caught up and drops the old ones.
 * Resumes a rebuild of the same version that was stopped or killed.
 */
export async function rebuildProjection(
  deps: ProjectorDeps,
  projection: Projection,
  onProgress?: (progress: RebuildProgress) => void,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const results = await rebuildProjections(deps, [projection], onProgress && ((_name, progress) => onProgress(progress)), options);
  return results.get(projection.name)!;
}

/**
 * rebuildProjection for several projections in one pass over the log: each batch is read once and applied to
 * every shadow it extends, side by side. Then each is caught up, indexed and swapped in on its own, all at once.
 */
export async function rebuildProjections(
  deps: ProjectorDeps,
  projections: readonly Projection[],
  onProgress?: (name: string, progress: RebuildProgress) => void,
  options: RebuildOptions = {},
): Promise<Map<string, RebuildResult>> {
  const batchSize = options.batchSize ?? DEFAULT_REBUILD_BATCH_SIZE;
  const signal = options.signal && { signal: options.signal };
  const rebuilds = new Map<string, { track: Track; events: number; resumedFrom: number | null }>();
  for (const projection of projections) {
    const { resumed, state } = await beginRebuild(deps.db, projection, { restart: options.restart === true });
    rebuilds.set(projection.name, { track: shadowTrack(projection), events: state.events, resumedFrom: resumed ? state.checkpoint.pos : null });
    onProgress?.(projection.name, { events: state.events, position: state.checkpoint.pos });
  }
  const onBatch = (track: Track, outcome: BatchOutcome) => {
    // Batches another process committed first are not ours to count.
    if (outcome.discarded || !outcome.last) return;
    const rebuild = rebuilds.get(track.projection.name)!;
    rebuild.events += outcome.read;
    onProgress?.(track.projection.name, { events: rebuild.events, position: outcome.last.position });
  };
  await drainTogether(deps, [...rebuilds.values()].map((r) => r.track), batchSize, { onBatch, ...signal });

  // Then each is caught up, indexed and swapped in, all at once: indexing is PostgreSQL's work on one
  // connection each, so side by side they share the machine's cores instead of taking turns.
  const finish = async (projection: Projection): Promise<RebuildResult> => {
    const rebuild = rebuilds.get(projection.name)!;
    let swapped = false;
    for (;;) {
      await drain(deps, rebuild.track, batchSize, { onBatch: (outcome) => onBatch(rebuild.track, outcome), ...signal });
      await indexShadow(deps.db, projection);
      options.signal?.throwIfAborted();
      const outcome = await swapShadow(deps.db, projection);
      if (outcome === 'swapped') swapped = true;
      // 'behind': the live tables moved on meanwhile, so catch up again; 'unindexed': it was restarted meanwhile;
      // 'busy': readers held the live tables too long, so try again shortly.
      if (outcome === 'swapped' || outcome === 'gone') break;
      if (outcome === 'busy') await sleep(SWAP_RETRY_MS);
    }
    await dropRetired(deps.db, projection);
    return { events: rebuild.events, resumedFrom: rebuild.resumedFrom, swapped };
  };
  // Settled, all of them, before an error is thrown: none is left running on connections its caller closes.
  const settled = await Promise.allSettled(projections.map(finish));
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const results = new Map(projections.map((projection, i) => [projection.name, (settled[i] as PromiseFulfilledResult<RebuildResult>).value]));
  return results;
}

/** Whether the projection must be rebuilt: its rows were built under an older version, or a rebuild was left unfinished. */
export async function needsRebuild(db: Db, projection: Projection): Promise<boolean> {
  const [stored, rebuild] = await Promise.all([registered(db, projection), readRebuild(db, projection.name)]);
  // Versions only grow. During a rolling upgrade an older server must neither undo a newer server's rebuild
  // nor rebuild rows a newer version built; going back to an older version is an operator's explicit rebuild.
  if (rebuild !== null) return rebuild.version <= projection.version;
  return stored.version < projection.version;
}

export interface ProjectionStatus {
  name: string;
  /** The version the live rows were built under. */
  version: number;
  /** rebuilding: a rebuild into shadow tables is under way (or was stopped and waits to be resumed). */
  state: 'live' | 'rebuilding';
  position: number;
  checkpoint: Checkpoint;
  /** Events between the projection and the head of the log; 0 only when it has processed the head. */
  lag: number;
  updated_at: string;
  rebuild: { version: number; position: number; lag: number; events: number; started_at: string; updated_at: string } | null;
}

/** Events between a checkpoint and the head. Readers go in transaction order, so a checkpoint can sit behind the head with a higher pos than the head's: compare checkpoints for "caught up", positions only for how far. */
function lagOf(checkpoint: Checkpoint, head: { position: number; checkpoint: Checkpoint }): number {
  return compareCheckpoints(checkpoint, head.checkpoint) >= 0 ? 0 : Math.max(1, head.position - checkpoint.pos);
}

export async function projectionStatus(deps: ProjectorDeps, projections: readonly Projection[]): Promise<ProjectionStatus[]> {
  // Three statements at once: on the embedded database's one connection they wait behind a rebuild's batch
  // together, where one after another each waited behind a batch of its own.
  const [head, rebuilds, checkpoints] = await Promise.all([deps.store.head(), readRebuilds(deps.db), readCheckpoints(deps.db)]);
  const statuses: ProjectionStatus[] = [];
  for (const projection of projections) {
    const stored = checkpoints.get(projection.name) ?? (await registered(deps.db, projection));
    const { checkpoint } = stored;
    const rebuild = rebuilds.get(projection.name);
    statuses.push({
      name: projection.name,
      version: stored.version,
      state: rebuild ? 'rebuilding' : 'live',
      position: checkpoint.pos,
      checkpoint,
      lag: lagOf(checkpoint, head),
      updated_at: stored.updatedAt,
      rebuild: rebuild
        ? {
            version: rebuild.version,
            position: rebuild.checkpoint.pos,
            lag: lagOf(rebuild.checkpoint, head),
            events: rebuild.events,
            started_at: rebuild.startedAt,
            updated_at: rebuild.updatedAt,
          }
        : null,
    });
  }
  return statuses;
}

/** The lowest position the projections' live rows hold (one query: every read answer is stamped with it). */
export async function livePosition(db: Queryable, projections: readonly Projection[]): Promise<number> {
  const { rows } = await db.query<{ pos: number | string }>(`SELECT ${livePositionSql('$1')} AS pos`, [projections.map((p) => p.name)]);
  return Number(rows[0]?.pos ?? 0);
}

/**
 * Read-your-writes: whether every listed projection's live rows hold the event at `position`. Position 0
 * (no event) asks for nothing and is always reached; a position beyond the log never is.
 */
export async function hasReached(deps: { readonly store: EventStore; readonly db: Queryable }, projections: readonly Projection[], position: number): Promise<boolean> {
  if (position <= 0) return true;
  const target = await deps.store.checkpointOf(position);
  if (!target) return false;
  for (const projection of projections) {
    const stored = await readCheckpoint(deps.db, projection.name);
    if (!stored || compareCheckpoints(stored.checkpoint, target) < 0) return false;
  }
  return true;
}
