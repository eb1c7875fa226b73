// The periodic work of execution orchestration, run by one server at a time (the sweep's lease): approvals past
// their TTL recorded expired; executions whose server stopped renewing their claim recorded lost within
// seconds; approved executions their server never started started here, exactly once — or, once the
// approval's window has passed, refused as lost; sessions idle past NOMOS_SESSION_IDLE_CLOSE, and those of MCP
// sessions that lapsed, closed as abandoned. Each is decided against the session's stream, so a sweep that races
// a live server changes nothing twice.
import { RuleViolation } from '../domain/messages.ts';
import type { ExecutionOutcome } from '../domain/session/commands.ts';
import type { CommandDeps } from '../commands/context.ts';
import { closeAbandoned } from '../commands/close-abandoned.ts';
import { runSessionCommand } from '../commands/session.ts';
import { McpSessions } from '../mcp/sessions.ts';
import { dueApprovals } from '../projections/executions.ts';
import { type ExecutionService, SYSTEM } from './service.ts';

const BATCH = 100;

/** How sessions end by themselves. */
export interface SessionEndSettings {
  /** A session without an event for this long is closed as abandoned; null: never (NOMOS_SESSION_IDLE_CLOSE=off). */
  readonly idleCloseMs: number | null;
}

export const LOST_ERROR = 'lost: the server running it stopped before it ended; its outcome is unknown — check the target before running it again';

/** One sweep: returns what each part did. */
export async function sweep(
  deps: CommandDeps,
  executions: ExecutionService,
  sessions: SessionEndSettings = { idleCloseMs: null },
): Promise<{ expired: number; lost: number; started: number; refused: number; idleClosed: number; mcpLapsed: number }> {
  const expired = await expireDue(deps);
  const lost = await recordLost(deps, executions);
  const orphans = await startOrphaned(deps, executions);
  const mcpLapsed = await closeLapsedMcp(deps);
  const idleClosed = sessions.idleCloseMs === null ? 0 : await closeIdle(deps, sessions.idleCloseMs);
  return { expired, lost, ...orphans, idleClosed, mcpLapsed };
}

/**
 * Closes sessions with no event for idleMs as partial, abandoned, by the system actor; returns how many. A session
 * with a turn running, an approval pending or an execution on its way is left until that has ended (its own expiry
 * or lost-run path ends it), and then waits idleMs again from that last event. A deleted session is not closed.
 */
export async function closeIdle(deps: CommandDeps, idleMs: number): Promise<number> {
  const before = new Date(deps.clock().getTime() - idleMs).toISOString();
  // Through the index of open sessions (migrations/028): few are open at a time.
  const { rows } = await deps.readDb.query<{ id: string }>(
    `SELECT id FROM sessions WHERE status = 'active' AND deleted_at IS NULL AND last_active_at < $1 AND pending_approvals = 0
      ORDER BY created_at LIMIT $2`,
    [before, BATCH],
  );
  let closed = 0;
  for (const row of rows) {
    const result = await closeAbandoned(deps, row.id, { reason: 'idle', idleMs });
    if (result.closed) closed++;
  }
  return closed;
}

/** MCP sessions their client has not used for their TTL are ended, and the Nomos sessions they opened closed. */
export async function closeLapsedMcp(deps: CommandDeps): Promise<number> {
  let closed = 0;
  for (const sessionId of await new McpSessions(deps.readDb).endLapsed(deps.clock(), BATCH)) {
    const result = await closeAbandoned(deps, sessionId, { reason: 'mcp_session_ended', idleMs: 0 });
    if (result.closed) closed++;
  }
  return closed;
}

/** Records every pending approval past its TTL as expired; returns how many. */
export async function expireDue(deps: CommandDeps): Promise<number> {
  let expired = 0;
  for (const due of await dueApprovals(deps.readDb, deps.clock(), BATCH)) {
    const handled = await runSessionCommand(deps, due.session_id, { type: 'expire_approval', approval_id: due.id }, { actor: SYSTEM });
    expired += handled.events.length;
  }
  return expired;
}

/**
 * Executions recorded running whose claim has not been renewed for lostAfterMs (its server died or stopped), or
 * that have no claim at all and started that long ago (a server of a version before claims), are recorded
 * failed, lost: their command is neither blocked as already_running nor counted as silently fine, and the
 * agent that waited on one carries on with that fact. Returns how many.
 */
export async function recordLost(deps: CommandDeps, executions: ExecutionService): Promise<number> {
  const { lostAfterMs } = executions.settings;
  const startedBefore = new Date(deps.clock().getTime() - lostAfterMs).toISOString();
  const { rows } = await deps.readDb.query<{ id: string; session_id: string }>(
    `SELECT e.id, e.session_id FROM executions e LEFT JOIN execution_claims c ON c.execution_id = e.id
      WHERE e.status = 'running'
        AND ((c.execution_id IS NULL AND e.started_at < $1) OR c.beat_at < now() - $2 * interval '1 millisecond')
      ORDER BY e.started_at LIMIT $3`,
    [startedBefore, lostAfterMs, BATCH],
  );
  let lost = 0;
  for (const row of rows) {
    if (executions.live.has(row.id)) continue; // it runs here: this server's beat is only late
    const outcome: ExecutionOutcome = { kind: 'failed', exit_code: null, signal: null, error: LOST_ERROR, stdout_tail: '', stderr_tail: '', duration_ms: 0 };
    try {
      await runSessionCommand(deps, row.session_id, { type: 'finish_execution', execution_id: row.id, outcome }, { actor: SYSTEM });
      lost++;
    } catch (error) {
      // Its end was recorded meanwhile: nothing was lost.
      if (!(error instanceof RuleViolation)) throw error;
    }
    await deps.readDb.query('DELETE FROM execution_claims WHERE execution_id = $1 AND beat_at < now() - $2 * interval \'1 millisecond\'', [row.id, lostAfterMs]);
  }
  return lost;
}

/**
 * Approved executions not started approvedGraceMs after the grant and claimed by no live server: the server
 * that took the approval stopped first. Inside the approval's window the operator's decision stands and the
 * command starts here (the claim and the stream's expected version keep it to once); after it, nobody is
 * watching any more, so it is refused as lost and the agent may ask again.
 */
export async function startOrphaned(deps: CommandDeps, executions: ExecutionService): Promise<{ started: number; refused: number }> {
  const { approvedGraceMs, lostAfterMs } = executions.settings;
  const grantedBefore = new Date(deps.clock().getTime() - approvedGraceMs).toISOString();
  const { rows } = await deps.readDb.query<{ id: string; session_id: string; expires_at: Date | string }>(
    `SELECT e.id, e.session_id, a.expires_at FROM executions e
       JOIN approvals a ON a.id = e.approval_id
       LEFT JOIN execution_claims c ON c.execution_id = e.id
      WHERE e.status = 'approved' AND a.status = 'granted' AND NOT e.session_deleted AND a.decided_at < $1
        AND (c.execution_id IS NULL OR c.beat_at < now() - $2 * interval '1 millisecond')
      ORDER BY a.decided_at LIMIT $3`,
    [grantedBefore, lostAfterMs, BATCH],
  );
  let started = 0;
  let refused = 0;
  for (const row of rows) {
    if (new Date(row.expires_at).getTime() > deps.clock().getTime()) {
      if ((await executions.startApproved(row.session_id, row.id)) !== null) started++;
      continue;
    }
    const detail = 'Approved, but the server that was to start it stopped first, and the approval window had passed when another server found it; nothing ran. Request it again.';
    try {
      await runSessionCommand(deps, row.session_id, { type: 'refuse_execution', execution_id: row.id, reason: 'lost', detail }, { actor: SYSTEM });
      refused++;
    } catch (error) {
      if (!(error instanceof RuleViolation)) throw error;
    }
  }
  return { started, refused };
}
