// One agent loop per session across every server: a turn runs only while its server holds the session's turn
// lease, a row it renews; another server's /chat or /continue meanwhile is refused naming the holder, and a
// lease left by a server that died lapses, so the next turn takes it over.
import { RuleViolation } from '../domain/messages.ts';
import type { Queryable } from '../ports/db.ts';

export interface TurnLeaseSettings {
  /** How long a lease lasts unless renewed: how soon a dead server's session can take a turn again. */
  readonly ttlMs: number;
  /** How often the holder renews it (and learns of a cancel asked on another server). */
  readonly renewMs: number;
}

export const DEFAULT_TURN_LEASE: TurnLeaseSettings = { ttlMs: 15_000, renewMs: 3_000 };

/** A turn is running on some server (maybe this one): the session takes no other until it ends. */
export class TurnRunning extends RuleViolation {
  constructor(
    readonly sessionId: string,
    readonly holder: string,
    readonly turnId: string,
  ) {
    super('turn_running', `Turn ${turnId} of session ${sessionId} is running on ${holder}; wait for its done (GET /sessions/${sessionId}/stream), or cancel it (POST /sessions/${sessionId}/cancel).`);
  }
}

export interface HeldTurn {
  /** Aborts when the lease is lost (not renewed in time, taken over) or a cancel was asked on any server. */
  readonly signal: AbortSignal;
  /** Why signal aborted. */
  reason(): 'lost' | 'cancelled' | null;
  release(): Promise<void>;
}

export class TurnLeases {
  constructor(
    private readonly db: Queryable,
    /** This server's name, as other servers' refusals show it. */
    readonly holder: string,
    private readonly settings: TurnLeaseSettings = DEFAULT_TURN_LEASE,
    private readonly log: (message: string, error?: unknown) => void = () => undefined,
  ) {}

  /** Takes the session's lease for turnId, or throws TurnRunning naming who holds it. */
  async acquire(sessionId: string, turnId: string): Promise<HeldTurn> {
    const { rows } = await this.db.query<{ turn_id: string }>(
      `INSERT INTO turn_leases AS l (session_id, turn_id, holder, expires_at) VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond')
       ON CONFLICT (session_id) DO UPDATE SET turn_id = EXCLUDED.turn_id, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, cancel_requested = false
       WHERE l.expires_at < now()
       RETURNING turn_id`,
      [sessionId, turnId, this.holder, this.settings.ttlMs],
    );
    if (rows.length === 0) {
      const held = await this.holderOf(sessionId);
      // It lapsed or was released between the two statements: try once more.
      if (held === null) return this.acquire(sessionId, turnId);
      throw new TurnRunning(sessionId, held.holder, held.turnId);
    }
    return this.hold(sessionId, turnId);
  }

  /**
   * Takes the lease from a holder whose turn `ended` has already ended in the log (its `done` was streamed, and
   * it is only releasing): a client that posts the moment it reads `done` is not refused. Null when the lease
   * no longer names that turn.
   */
  async takeOverEnded(sessionId: string, ended: string, turnId: string): Promise<HeldTurn | null> {
    const { rows } = await this.db.query(
      `UPDATE turn_leases SET turn_id = $3, holder = $4, expires_at = now() + $5 * interval '1 millisecond', cancel_requested = false
       WHERE session_id = $1 AND turn_id = $2 RETURNING turn_id`,
      [sessionId, ended, turnId, this.holder, this.settings.ttlMs],
    );
    return rows.length === 0 ? null : this.hold(sessionId, turnId);
  }

  /** Who runs the session's turn now, if anyone. */
  async holderOf(sessionId: string): Promise<{ holder: string; turnId: string } | null> {
    const { rows } = await this.db.query<{ holder: string; turn_id: string }>('SELECT holder, turn_id FROM turn_leases WHERE session_id = $1 AND expires_at >= now()', [sessionId]);
    const row = rows[0];
    return row === undefined ? null : { holder: row.holder, turnId: row.turn_id };
  }

  /** Tells the holder of the session's running turn, wherever it runs, to stop. */
  async requestCancel(sessionId: string): Promise<void> {
    await this.db.query('UPDATE turn_leases SET cancel_requested = true WHERE session_id = $1 AND expires_at >= now()', [sessionId]);
  }

  private hold(sessionId: string, turnId: string): HeldTurn {
    const abort = new AbortController();
    let why: 'lost' | 'cancelled' | null = null;
    const stop = (reason: 'lost' | 'cancelled') => {
      why ??= reason;
      abort.abort();
    };
    let renewing: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      renewing = this.renew(sessionId, turnId).then(
        (state) => {
          if (state !== 'held') stop(state);
        },
        (error: unknown) => this.log(`renewing the turn lease of session ${sessionId}`, error),
      );
    }, this.settings.renewMs);
    return {
      signal: abort.signal,
      reason: () => why,
      release: async () => {
        clearInterval(timer);
        await renewing;
        await this.db.query('DELETE FROM turn_leases WHERE session_id = $1 AND turn_id = $2', [sessionId, turnId]);
      },
    };
  }

  private async renew(sessionId: string, turnId: string): Promise<'held' | 'lost' | 'cancelled'> {
    const { rows } = await this.db.query<{ cancel_requested: boolean }>(
      `UPDATE turn_leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE session_id = $1 AND turn_id = $2 RETURNING cancel_requested`,
      [sessionId, turnId, this.settings.ttlMs],
    );
    const row = rows[0];
    if (row === undefined) return 'lost';
    return row.cancel_requested ? 'cancelled' : 'held';
  }
}
