// When Nomos itself may close a task nobody finished (idle too long, or the MCP session that opened it ended):
// only an open session with nothing in flight. A running turn, a pending approval or an execution on its way has
// its own end (the turn lease, the approval's expiry, the lost-run sweep); the task is closed once that has come.
import type { Actor } from '../messages.ts';
import type { SessionState } from './state.ts';

export type AbandonReason = 'idle' | 'mcp_session_ended';

/**
 * Who closes an abandoned task: the system actor Nomos's own sweeps write as (src/execution/service.ts's SYSTEM).
 * Never the agent's own loop (system:agent), which completes tasks the model decided on.
 */
export const ABANDONED_BY: Actor = { role: 'system', id: 'executor' };

/** Whether the task was closed by Nomos, from who completed it (role:id, as the sessions projection keeps it). */
export function closedByNomos(closedBy: string | null): boolean {
  return closedBy === `${ABANDONED_BY.role}:${ABANDONED_BY.id}`;
}

/** What keeps the session from being closed now, in words, or null when it may be closed. */
export function keptOpenBy(state: SessionState): string | null {
  if (state.status !== 'active') return `the session is ${state.status}`;
  if (state.openTurn !== null) return 'a turn is running';
  if (state.pendingApprovalIds.length > 0) return 'an approval is pending';
  const inFlight = [...state.executions.values()].filter((e) => e.status === 'runnable' || e.status === 'approved' || e.status === 'running' || e.status === 'awaiting_approval');
  if (inFlight.length > 0) return 'an execution has not ended';
  return null;
}

/** The summary the closing complete_task records: why Nomos closed it, in the operator's words. */
export function abandonSummary(reason: AbandonReason, idleMs: number): string {
  if (reason === 'mcp_session_ended') return 'The MCP client that worked in this session ended its MCP session before completing the task.';
  return `No activity for ${describeDuration(idleMs)}: the task was left unfinished.`;
}

/** 90 minutes as "1 h 30 min", 24 h as "24 h". */
export function describeDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h > 0 ? `${h} h` : '', m > 0 ? `${m} min` : ''].filter(Boolean).join(' ');
}
