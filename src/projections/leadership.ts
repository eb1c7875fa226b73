// Several servers may share one database, but exactly one of them runs each projector at a time: the one
// holding the projection's lease (a PostgreSQL advisory lock on a connection of its own). When that server
// dies its connection goes and so does the lock; another server takes the lease within `retryMs`.
// The leader also runs the projection's rebuild when its version changed or a rebuild was left unfinished,
// beside the live projector; a new leader resumes the rebuild where the old one stopped.
import type { Lease } from '../ports/db.ts';
import type { Checkpoint } from '../ports/event-store.ts';
import type { Projection } from './projection.ts';
import { needsRebuild, Projector, type ProjectorDeps, type ProjectorGroup, rebuildProjection, type RebuildResult } from './projector.ts';
import { dropRetired } from './shadow.ts';

export interface LedProjectorOptions {
  retryMs: number;
  /** Events per rebuild transaction (smaller on PGlite, whose one connection readers wait for). */
  rebuildBatchSize?: number;
  onError?: (error: unknown) => void;
  /** Told where the live rows stand after each batch this process applied. */
  onApplied?: (checkpoint: Checkpoint) => void;
  /** Told when this process starts (or resumes) a rebuild and when it has swapped it in. */
  onRebuild?: (event: { phase: 'started' } | ({ phase: 'swapped'; seconds: number } & RebuildResult)) => void;
  /**
   * The live projectors of this process, run as one (src/projections/projector.ts, ProjectorGroup): the
   * projection joins it while this process leads it. Without one it runs a Projector of its own.
   */
  group?: ProjectorGroup;
}

export class LedProjector {
  private stopped = false;
  private lease: Lease | null = null;
  private projector: Projector | null = null;
  private led = false;
  /** Resolves once stop() is called: every wait of the loop races it, so a stop that lands mid-step still ends it. */
  private readonly stopping: Promise<void>;
  private requestStop!: () => void;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly deps: ProjectorDeps,
    private readonly projection: Projection,
    private readonly options: LedProjectorOptions,
  ) {
    this.stopping = new Promise<void>((resolve) => (this.requestStop = resolve));
  }

  /** Whether this process runs the projector now. */
  get leading(): boolean {
    return this.led;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.requestStop();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.lease = await this.deps.db.tryLease(`projection:${this.projection.name}`);
      } catch (error) {
        this.options.onError?.(error);
        this.lease = null;
      }
      if (this.lease === null) {
        await this.pause(this.options.retryMs);
        continue;
      }
      const hooks = {
        ...(this.options.onError && { onError: this.options.onError }),
        ...(this.options.onApplied && { onApplied: this.options.onApplied }),
      };
      if (this.options.group) this.options.group.join(this.projection, hooks);
      else (this.projector = new Projector(this.deps, this.projection, hooks)).start();
      this.led = true;
      const rebuilding = new AbortController();
      const rebuild = this.rebuildWhileLeading(rebuilding.signal);
      // Lead until the lease is lost (its connection dropped) or we stop (also when stop() came while the
      // lease was being taken: a wake-up handed out per wait missed that one, and shutdown waited forever).
      await Promise.race([this.lease.lost, this.stopping]);
      rebuilding.abort();
      await rebuild;
      if (this.options.group) await this.options.group.leave(this.projection.name);
      else await this.projector?.stop();
      this.projector = null;
      this.led = false;
      await this.lease.release();
      this.lease = null;
    }
  }

  /** Rebuilds the projection if it needs it, retrying after errors, until done or the signal ends the lead. */
  private async rebuildWhileLeading(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await dropRetired(this.deps.db, this.projection);
        if (!(await needsRebuild(this.deps.db, this.projection))) return;
        const started = Date.now();
        this.options.onRebuild?.({ phase: 'started' });
        const result = await rebuildProjection(this.deps, this.projection, undefined, {
          signal,
          ...(this.options.rebuildBatchSize !== undefined && { batchSize: this.options.rebuildBatchSize }),
        });
        this.options.onRebuild?.({ phase: 'swapped', seconds: (Date.now() - started) / 1000, ...result });
        return;
      } catch (error) {
        if (signal.aborted) return;
        this.options.onError?.(error);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.options.retryMs);
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
  }

  private async pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), this.stopping]);
    clearTimeout(timer);
  }
}
