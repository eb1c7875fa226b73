// Several servers may share one database, but exactly one of them runs each projector at a time: the one
// holding the projection's lease (a PostgreSQL advisory lock on a connection of its own). When that server
// dies its connection goes and so does the lock; another server takes the lease within `retryMs`.
import type { Lease } from '../adapters/db/db.ts';
import type { Projection } from './projection.ts';
import { Projector, type ProjectorDeps } from './projector.ts';

export class LedProjector {
  private stopped = false;
  private lease: Lease | null = null;
  private projector: Projector | null = null;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly deps: ProjectorDeps,
    private readonly projection: Projection,
    private readonly options: { retryMs: number; onError?: (error: unknown) => void },
  ) {}

  /** Whether this process runs the projector now. */
  get leading(): boolean {
    return this.projector !== null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
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
      this.projector = new Projector(this.deps, this.projection, this.options.onError ? { onError: this.options.onError } : {});
      this.projector.start();
      // Lead until the lease is lost (its connection dropped) or we stop.
      await Promise.race([this.lease.lost, new Promise<void>((resolve) => (this.wake = resolve))]);
      await this.projector.stop();
      this.projector = null;
      await this.lease.release();
      this.lease = null;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
