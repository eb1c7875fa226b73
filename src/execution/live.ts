// The executions this server runs, and what every server can know of them: a claim row per execution (taken
// before its start is recorded, so two servers never both start it), renewed as a heartbeat while it runs and
// carrying its output so far and the hung probe's answer. A server that dies stops beating; the sweep then
// records its executions lost within seconds (src/execution/sweeps.ts), and GET /executions/:id on any server
// shows a running command's output from the row.
import type { Queryable } from '../ports/db.ts';
import type { ExecHandle } from '../ports/executor.ts';

export interface LiveSettings {
  /** How often a running execution's claim is renewed, with its output so far. */
  readonly heartbeatMs: number;
  /** A claim not renewed for this long belongs to a server that is gone. */
  readonly lostAfterMs: number;
  /** A running command silent this long is probed for uninterruptible sleep (hung). */
  readonly hungAfterMs: number;
}

export interface Live {
  readonly handle: ExecHandle;
  readonly sessionId: string;
  readonly target: string;
  readonly command: string;
  readonly startedAt: number;
}

/** What the claim row says of an execution another server (or this one) runs. */
export interface ClaimView {
  readonly holder: string;
  readonly state: 'starting' | 'running' | 'hung';
  readonly stdout_so_far: string;
  readonly stderr_so_far: string;
  readonly idle_ms: number;
  readonly running_ms: number;
  /** Milliseconds since the holder last renewed it. */
  readonly beat_age_ms: number;
}

/** The most of each stream a claim row carries: the tail a reader needs to see where a command is. */
const OUTPUT_ROW_CHARS = 16_384;

export class LiveExecutions {
  private readonly claimed = new Set<string>();
  private readonly running = new Map<string, Live>();
  private readonly probed = new Map<string, 'running' | 'hung'>();
  private readonly probing = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Queryable,
    /** This server's name in the claims. */
    readonly holder: string,
    private readonly settings: LiveSettings,
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
  ) {}

  /**
   * Claims the execution for this server: true when it is ours now (nobody had it, or its holder stopped
   * beating), false when a live server holds it.
   */
  async claim(executionId: string, sessionId: string): Promise<boolean> {
    const { rows } = await this.db.query(
      `INSERT INTO execution_claims AS c (execution_id, session_id, holder) VALUES ($1, $2, $3)
       ON CONFLICT (execution_id) DO UPDATE SET holder = EXCLUDED.holder, claimed_at = now(), beat_at = now(), state = 'starting', stdout_so_far = '', stderr_so_far = ''
       WHERE c.holder = EXCLUDED.holder OR c.beat_at < now() - $4 * interval '1 millisecond'
       RETURNING execution_id`,
      [executionId, sessionId, this.holder, this.settings.lostAfterMs],
    );
    if (rows.length === 0) return false;
    this.claimed.add(executionId);
    this.ensureBeating();
    return true;
  }

  /** The command runs: its output and idleness go out with each heartbeat from now on. */
  attach(executionId: string, live: Live): void {
    this.running.set(executionId, live);
  }

  /** Its end is recorded (or it never started): the claim goes. */
  async release(executionId: string): Promise<void> {
    this.claimed.delete(executionId);
    this.running.delete(executionId);
    this.probed.delete(executionId);
    await this.db.query('DELETE FROM execution_claims WHERE execution_id = $1 AND holder = $2', [executionId, this.holder]);
  }

  /** This server's own handle on a running execution, if it runs here. */
  local(executionId: string): Live | undefined {
    return this.running.get(executionId);
  }

  has(executionId: string): boolean {
    return this.claimed.has(executionId);
  }

  /** The claim row of an execution, whoever holds it. */
  async view(executionId: string): Promise<ClaimView | null> {
    const { rows } = await this.db.query<ClaimView>(
      `SELECT holder, state, stdout_so_far, stderr_so_far, idle_ms, running_ms, (extract(epoch FROM now() - beat_at) * 1000)::int AS beat_age_ms
         FROM execution_claims WHERE execution_id = $1`,
      [executionId],
    );
    return rows[0] ?? null;
  }

  /** Whether a local handle's command looks hung: probed when it was silent long enough, at most one probe at a time. */
  async stateOf(live: Live): Promise<'running' | 'hung'> {
    if (live.handle.idleMs() < this.settings.hungAfterMs) return 'running';
    const state = await live.handle.probe().catch(() => 'running' as const);
    return state === 'hung' ? 'hung' : 'running';
  }

  /** Stops beating: claims of what still runs here lapse, and the sweep of a server still up records them lost. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
  }

  private ensureBeating(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      this.beating = this.beat().catch((error: unknown) => this.log('renewing execution claims', error));
    }, this.settings.heartbeatMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    for (const executionId of this.claimed) {
      const live = this.running.get(executionId);
      if (!live) {
        await this.db.query('UPDATE execution_claims SET beat_at = now() WHERE execution_id = $1 AND holder = $2', [executionId, this.holder]);
        continue;
      }
      this.probeInBackground(executionId, live);
      const { stdout, stderr } = live.handle.output();
      await this.db.query(
        `UPDATE execution_claims SET beat_at = now(), state = $3, stdout_so_far = $4, stderr_so_far = $5, idle_ms = $6, running_ms = $7 WHERE execution_id = $1 AND holder = $2`,
        [executionId, this.holder, this.probed.get(executionId) ?? 'running', stdout.slice(-OUTPUT_ROW_CHARS), stderr.slice(-OUTPUT_ROW_CHARS), live.handle.idleMs(), Date.now() - live.startedAt],
      );
    }
  }

  /** The probe takes a moment (a second look at the process table): its answer goes out with a later beat. */
  private probeInBackground(executionId: string, live: Live): void {
    if (this.probing.has(executionId)) return;
    this.probing.add(executionId);
    void this.stateOf(live)
      .then((state) => {
        if (this.running.has(executionId)) this.probed.set(executionId, state);
      })
      .finally(() => this.probing.delete(executionId));
  }
}
