// Read-your-writes for many requests at once: each waits until every projection's live rows hold the event at
// its position. A projector of this process says where it got after each batch it commits (applied), which
// answers the waits at once without a statement; every `pollMs` while anyone waits, one look at the stored
// checkpoints serves all of them, for the projections another server sharing the database runs.
import { PREPARED, type Queryable } from '../ports/db.ts';
import { type Checkpoint, compareCheckpoints } from '../ports/event-store.ts';
import type { Projection } from './projection.ts';

interface Waiter {
  readonly position: number;
  /** The projections whose rows must hold it. */
  readonly names: readonly string[];
  /** Where the event stands in the log's order; looked up on the waiter's first tick. */
  target: Checkpoint | null;
  readonly deadline: number;
  readonly resolve: (reached: boolean) => void;
}

/** Where events stand in the log's order, by position; a position not (yet) in the log is left out. */
export type Locate = (positions: readonly number[]) => Promise<Map<number, Checkpoint>>;

export interface ReadWaitOptions {
  /** How often the stored checkpoints are looked at while someone waits on a projection another server runs. */
  readonly pollMs: number;
  /**
   * Whether this process runs the projection now (its projector reports each batch through applied); the
   * stored checkpoints of those are looked at only every SLOW_POLLS polls, in case the lead moved meanwhile.
   */
  readonly leads?: (name: string) => boolean;
}

const SLOW_POLLS = 20;

export class ReadWait {
  private readonly waiters = new Set<Waiter>();
  private readonly names: string[];
  private looping: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private nudged = false;
  private closed = false;
  /** Where this process's projectors have committed, by projection. */
  private readonly local = new Map<string, Checkpoint>();
  private lastLook = 0;

  constructor(
    private readonly db: Queryable,
    private readonly locate: Locate,
    projections: readonly Projection[],
    private readonly options: ReadWaitOptions,
  ) {
    this.names = projections.map((p) => p.name);
  }

  /**
   * Whether the live rows of every projection (or of those named) hold the event at `position`, waiting at
   * most `waitMs` for it. Position 0 or less (nothing was written) is reached at once; a position beyond the
   * log never is.
   */
  until(position: number, waitMs: number, names: readonly string[] = this.names): Promise<boolean> {
    if (position <= 0) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      this.waiters.add({ position, names, target: null, deadline: Date.now() + waitMs, resolve });
      this.nudge();
      this.looping ??= this.loop().finally(() => (this.looping = null));
    });
  }

  /** A projector of this process committed its rows up to `checkpoint`: the waits it answers end now. */
  applied(name: string, checkpoint: Checkpoint): void {
    const known = this.local.get(name);
    if (known === undefined || compareCheckpoints(known, checkpoint) < 0) this.local.set(name, checkpoint);
    this.nudge();
  }

  private nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Answers every wait still open with "not reached" and takes no more. */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters) waiter.resolve(false);
    this.waiters.clear();
    this.wake?.();
    await this.looping;
  }

  private async loop(): Promise<void> {
    while (this.waiters.size > 0 && !this.closed) {
      this.nudged = false;
      try {
        await this.tick();
      } catch {
        // A failed look (a connection lost) is tried again at the next tick; a waiter's bound still holds.
      }
      const now = Date.now();
      for (const waiter of this.waiters) {
        if (waiter.deadline <= now) this.settle(waiter, false);
      }
      if (this.waiters.size === 0 || this.nudged) continue;
      const nextDeadline = Math.min(...[...this.waiters].map((w) => w.deadline));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(0, Math.min(this.options.pollMs, nextDeadline - now)));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = null;
    }
  }

  /**
   * The new waiters' events placed in the log's order; then each waiter checked against what this process's
   * projectors have committed and, at most every `pollMs`, against the stored checkpoints (another server's).
   */
  private async tick(): Promise<void> {
    const unplaced = [...this.waiters].filter((w) => w.target === null);
    if (unplaced.length > 0) {
      const found = await this.locate([...new Set(unplaced.map((w) => w.position))]);
      // One not in the log (yet, or at all) cannot be reached, and its bound answers it.
      for (const waiter of unplaced) waiter.target = found.get(waiter.position) ?? null;
    }
    this.settleReached(this.local);
    if (this.waiters.size === 0) return;
    const leads = this.options.leads;
    const elsewhere = leads === undefined || [...this.waiters].some((w) => !w.names.every(leads));
    if (Date.now() - this.lastLook < this.options.pollMs * (elsewhere ? 1 : SLOW_POLLS)) return;
    this.lastLook = Date.now();
    const { rows } = await this.db.query<{ name: string; tx: string | number; pos: string | number }>(
      'SELECT name, tx, pos FROM projection_checkpoints WHERE name = ANY($1::text[])',
      [this.names],
      PREPARED,
    );
    const stored = new Map(rows.map((r) => [r.name, { tx: Number(r.tx), pos: Number(r.pos) }]));
    // Either source is a place the rows have reached: the further of the two counts.
    for (const [name, checkpoint] of this.local) {
      const at = stored.get(name);
      if (at === undefined || compareCheckpoints(at, checkpoint) < 0) stored.set(name, checkpoint);
    }
    this.settleReached(stored);
  }

  private settleReached(stands: ReadonlyMap<string, Checkpoint>): void {
    for (const waiter of this.waiters) {
      const target = waiter.target;
      if (target === null) continue;
      const holds = (name: string) => {
        const at = stands.get(name);
        return at !== undefined && compareCheckpoints(target, at) <= 0;
      };
      if (waiter.names.every(holds)) this.settle(waiter, true);
    }
  }

  private settle(waiter: Waiter, reached: boolean): void {
    this.waiters.delete(waiter);
    waiter.resolve(reached);
  }
}
