// What stops this process's event loop, as GET /metrics shows it: how late the loop ran (a timer's lateness,
// sampled by node:perf_hooks) and the garbage collector's pauses by kind. Every request a server answers waits
// through these; several servers on one database each have their own (a scrape is per process).
import { constants, type IntervalHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** The histogram's timer: each tick records the time since the one before, so lateness is that less this. */
const RESOLUTION_MS = 10;

export interface Pauses {
  /**
   * How late the event loop ran since the previous sample, in seconds: the time between two ticks of a 10 ms
   * timer, less the 10 ms (0 when no two ticks were recorded).
   */
  readonly loopDelay: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Garbage collections since the process started, by kind: how many, and their pauses' total in seconds. */
  readonly gc: ReadonlyMap<string, { readonly count: number; readonly seconds: number }>;
}

export class ProcessPauses {
  private readonly delay: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly gc = new Map<string, { count: number; seconds: number }>(Object.values(GC_KINDS).map((kind) => [kind, { count: 0, seconds: 0 }]));
  private readonly observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[(entry as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
      const total = this.gc.get(kind) ?? { count: 0, seconds: 0 };
      total.count += 1;
      total.seconds += entry.duration / 1_000;
      this.gc.set(kind, total);
    }
  });

  constructor() {
    this.delay.enable();
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** The loop's delay since the previous sample (the histogram starts again), and the collections so far. */
  sample(): Pauses {
    const seconds = (nanoseconds: number) => (Number.isFinite(nanoseconds) ? Math.max(0, nanoseconds / 1e9 - RESOLUTION_MS / 1_000) : 0);
    const recorded = this.delay.count > 0;
    const loopDelay = recorded ? { p50: seconds(this.delay.percentile(50)), p99: seconds(this.delay.percentile(99)), max: seconds(this.delay.max) } : { p50: 0, p99: 0, max: 0 };
    this.delay.reset();
    return { loopDelay, gc: new Map([...this.gc].map(([kind, total]) => [kind, { ...total }])) };
  }

  close(): void {
    this.delay.disable();
    this.observer.disconnect();
  }
}
