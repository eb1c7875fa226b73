// The agent's reactor: follows the log and, when an execution the agent asked for ends (whichever server
// approved or ran it, or recorded it lost) or is denied, has the agent carry on with a turn of its own. It runs on one
// server at a time (a LedLoop), keeps its place in reactor_checkpoints, and notes the sessions to wake in
// agent_wakeups before it moves past their events, so a restart or a turn still running loses none.
import { RuleViolation } from '../domain/messages.ts';
import { unseenExecutionEnd } from '../domain/session/continuation.ts';
import { sessionIdOf, sessionStream } from '../domain/session/stream.ts';
import type { Db } from '../ports/db.ts';
import { type Checkpoint, type EventStore } from '../ports/event-store.ts';
import { pause } from '../leases/led-loop.ts';
import type { Agent } from './agent.ts';
import { TurnRunning } from './turn-lease.ts';

const NAME = 'agent';
const PAGE = 500;
const ENDS = new Set(['ExecutionSucceeded', 'ExecutionFailed', 'ExecutionTimedOut', 'ExecutionRefused', 'ApprovalDenied']);
const SYSTEM = { actor: { role: 'system', id: 'agent' } } as const;

export interface ReactorOptions {
  /** How often sessions whose turn was still running are looked at again, and the log when no change is signalled. */
  readonly pollMs: number;
  readonly log: (message: string, error?: unknown) => void;
}

/** The session's news was read, or its agent stopped, between the first look and taking the turn. */
class NothingToCarryOn extends Error {}

export class AgentReactor {
  constructor(
    private readonly store: EventStore,
    private readonly db: Db,
    private readonly agent: Agent,
    private readonly options: ReactorOptions,
  ) {}

  /** Runs while `signal` lasts (the lead): reads the log from its place, notes and wakes sessions. */
  async run(signal: AbortSignal): Promise<void> {
    let changed = true;
    let wake: (() => void) | null = null;
    const subscription = this.store.changes().subscribe(() => {
      changed = true;
      wake?.();
    });
    try {
      let after = await this.place();
      while (!signal.aborted) {
        changed = false;
        const page = await this.store.readAll({ after, limit: PAGE });
        const sessions = new Set<string>();
        for (const event of page.events) {
          const sessionId = ENDS.has(event.type) ? sessionIdOf(event.streamName) : null;
          if (sessionId !== null) sessions.add(sessionId);
        }
        for (const sessionId of sessions) await this.db.query('INSERT INTO agent_wakeups (session_id) VALUES ($1) ON CONFLICT (session_id) DO NOTHING', [sessionId]);
        const last = page.events.at(-1);
        if (last) {
          after = last.checkpoint;
          await this.db.query('UPDATE reactor_checkpoints SET tx = $2, pos = $3 WHERE name = $1', [NAME, after.tx, after.pos]);
        }
        await this.wakeSessions(signal);
        if (page.pending || page.events.length === PAGE || changed) continue;
        await Promise.race([pause(this.options.pollMs, signal), new Promise<void>((resolve) => (wake = resolve))]);
        wake = null;
      }
    } finally {
      subscription.unsubscribe();
    }
  }

  /** Where the reactor stands; a first start begins at the log's head (history was handled before it existed). */
  private async place(): Promise<Checkpoint> {
    const { rows } = await this.db.query<{ tx: string; pos: string }>('SELECT tx, pos FROM reactor_checkpoints WHERE name = $1', [NAME]);
    const row = rows[0];
    if (row) return { tx: Number(row.tx), pos: Number(row.pos) };
    const { checkpoint } = await this.store.head();
    await this.db.query('INSERT INTO reactor_checkpoints (name, tx, pos) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [NAME, checkpoint.tx, checkpoint.pos]);
    return this.place();
  }

  /** Each noted session: carry on if its agent has not seen an execution's end, unless a turn runs (try later). */
  private async wakeSessions(signal: AbortSignal): Promise<void> {
    const { rows } = await this.db.query<{ session_id: string }>('SELECT session_id FROM agent_wakeups ORDER BY noted_at LIMIT 100');
    for (const { session_id: sessionId } of rows) {
      if (signal.aborted) return;
      try {
        // Asked again once the turn is ours: a turn that held it until just now may have read the news, or been
        // cancelled, after the first look (the agent then started by itself in a session its operator had stopped).
        const stillNeeded = async () => {
          if (!(await this.needsTurn(sessionId))) throw new NothingToCarryOn();
        };
        if (await this.needsTurn(sessionId)) await this.agent.startTurn(sessionId, 'execution_finished', SYSTEM, stillNeeded);
      } catch (error) {
        if (error instanceof TurnRunning) continue; // it reads the news itself, or ends without it: asked again then
        // Nothing left to carry on from, or a rule refused (the session closed meanwhile): the wake-up ends; other
        // errors retry.
        if (!(error instanceof RuleViolation || error instanceof NothingToCarryOn)) {
          this.options.log(`carrying on in session ${sessionId}`, error);
          continue;
        }
      }
      await this.db.query('DELETE FROM agent_wakeups WHERE session_id = $1', [sessionId]);
    }
  }

  private async needsTurn(sessionId: string): Promise<boolean> {
    const { events } = await this.store.readStream(sessionStream(sessionId));
    return unseenExecutionEnd(events) !== null;
  }
}
