// Work that exactly one of the servers sharing a database does at a time (the expiry and lost-execution sweep,
// the agent's reactor): the one holding the named lease. When that server dies its lease goes with its
// connection, and another server takes the work over within `retryMs`.
import type { Db, Lease } from '../ports/db.ts';

export interface LedLoopOptions {
  readonly retryMs: number;
  readonly onError?: (error: unknown) => void;
}

export class LedLoop {
  private lease: Lease | null = null;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly name: string,
    /** Runs while this process leads; must return soon after `signal` aborts (the lead ended or stop was called). */
    private readonly work: (signal: AbortSignal) => Promise<void>,
    private readonly options: LedLoopOptions,
  ) {}

  get leading(): boolean {
    return this.lease !== null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const stopped = this.stopping.signal;
    while (!stopped.aborted) {
      try {
        this.lease = await this.db.tryLease(this.name);
      } catch (error) {
        this.options.onError?.(error);
        this.lease = null;
      }
      if (this.lease === null) {
        await pause(this.options.retryMs, stopped);
        continue;
      }
      // A stop that came while the lease was being taken is seen here: the lead then ends at once.
      const lead = new AbortController();
      const end = () => lead.abort();
      stopped.addEventListener('abort', end, { once: true });
      if (stopped.aborted) end();
      void this.lease.lost.then(end);
      try {
        await this.work(lead.signal);
      } catch (error) {
        if (!lead.signal.aborted) this.options.onError?.(error);
      }
      stopped.removeEventListener('abort', end);
      await this.lease.release().catch(() => undefined);
      this.lease = null;
      if (!stopped.aborted) await pause(this.options.retryMs, stopped);
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Calls `step` every `everyMs` until `signal` aborts; a failed step is reported and the next one still runs. */
export async function every(everyMs: number, signal: AbortSignal, step: () => Promise<void>, onError?: (error: unknown) => void): Promise<void> {
  while (!signal.aborted) {
    try {
      await step();
    } catch (error) {
      if (!signal.aborted) onError?.(error);
    }
    await pause(everyMs, signal);
  }
}
