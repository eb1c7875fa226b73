// How a service stops: the steps of a clean close in order under one deadline, and the signals that ask for
// it. Whatever a step waits on (a client, a projector retrying a database that is gone), the deadline ends it.
// The deadline is configuration (NOMOS_SHUTDOWN_MS, src/config.ts).

export interface CloseStep {
  /** What stays open while the step runs, as a log line names it. */
  readonly name: string;
  readonly close: () => Promise<void>;
}

export interface CloseOutcome {
  /** The step running when the deadline passed, and those after it; empty when every step finished. */
  readonly unfinished: readonly string[];
  readonly failed: ReadonlyArray<{ readonly name: string; readonly error: unknown }>;
}

/** Runs the steps one after the other (a failed step does not stop the rest) until they end or `deadlineMs` passes. */
export async function closeInOrder(steps: readonly CloseStep[], deadlineMs: number): Promise<CloseOutcome> {
  const failed: Array<{ name: string; error: unknown }> = [];
  let current = 0;
  const all = (async () => {
    for (; current < steps.length; current++) {
      const step = steps[current]!;
      await step.close().catch((error: unknown) => failed.push({ name: step.name, error }));
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
  const outcome = await Promise.race([all.then(() => 'done' as const), late]);
  clearTimeout(timer);
  return { unfinished: outcome === 'done' ? [] : steps.slice(current).map((s) => s.name), failed: [...failed] };
}

/**
 * A repeat of the first signal sooner than this is the same request delivered twice: Ctrl-C under `npm start`
 * reaches the server from the terminal and again from npm, which forwards it.
 */
export const REPEAT_AFTER_MS = 500;

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * `stop` on the first SIGTERM or SIGINT; `now` on a later one, once the first is REPEAT_AFTER_MS old: whoever
 * sends a second means it.
 */
export function onStopSignals(stop: (signal: StopSignal) => void, now: (signal: StopSignal) => void): void {
  let first: number | null = null;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (first === null) {
        first = Date.now();
        stop(signal);
      } else if (Date.now() - first >= REPEAT_AFTER_MS) now(signal);
    });
  }
}
