// How big each bench run is. `full` is the scale; `small` exercises every measurement in seconds (CI).

export interface Scale {
  readonly name: string;
  /** Events appended one command at a time by one writer, then by 32 concurrent writers. */
  readonly appendEvents: { readonly one: number; readonly thirtyTwo: number };
  /** Size of the log every projection is rebuilt from. */
  readonly rebuildEvents: number;
  /** Sessions in the read model when GET /sessions, the audit and the lag are measured. */
  readonly sessions: number;
  readonly listRequests: number;
  readonly auditSessions: number;
  /**
   * Steady append rates to measure the lag at, each for `seconds`: one the projectors sustain and one beyond
   * what they sustain (where the lag grows for as long as the run lasts).
   */
  readonly lag: { readonly rates: readonly number[]; readonly seconds: number };
}

export const SCALES: Record<string, Scale> = {
  full: {
    name: 'full',
    appendEvents: { one: 20_000, thirtyTwo: 100_000 },
    rebuildEvents: 1_000_000,
    sessions: 100_000,
    listRequests: 2_000,
    auditSessions: 10_000,
    lag: { rates: [200, 1_000], seconds: 30 },
  },
  medium: {
    name: 'medium',
    appendEvents: { one: 5_000, thirtyTwo: 20_000 },
    rebuildEvents: 100_000,
    sessions: 5_000,
    listRequests: 1_000,
    auditSessions: 2_000,
    lag: { rates: [200, 500], seconds: 20 },
  },
  small: {
    name: 'small',
    appendEvents: { one: 500, thirtyTwo: 2_000 },
    rebuildEvents: 5_000,
    sessions: 150,
    listRequests: 200,
    auditSessions: 100,
    lag: { rates: [200], seconds: 2 },
  },
};
