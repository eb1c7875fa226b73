// Whether the agent must carry on by itself: an execution it asked for ended (ran, failed, was refused or
// lost, or the operator denied it) after its last turn had looked, so no model call has seen that end yet, and
// the operator did not stop the agent (a cancelled turn). Derived from the session's events alone, so whichever
// server approved or ran the command, or came back after a crash, reaches the same answer.

/** The part of a stored event the rule reads (the event store's StoredEvent has it). */
export interface StoredEventLike {
  readonly type: string;
  readonly data: unknown;
  readonly metadata: Record<string, unknown>;
  /** 0-based position in the session's stream. */
  readonly streamPosition: number;
}

const ENDS = new Set(['ExecutionSucceeded', 'ExecutionFailed', 'ExecutionTimedOut', 'ExecutionRefused']);

/** The id of the execution whose end the agent has not seen, or null when there is nothing to carry on from. */
export function unseenExecutionEnd(events: readonly StoredEventLike[]): string | null {
  const byAgent = new Set<string>();
  const approvals = new Map<string, string>();
  let end: { executionId: string; position: number } | null = null;
  let closed = false;
  /** The last turn was cancelled: the operator stopped the agent, and only the operator starts it again. */
  let cancelled = false;
  for (const e of events) {
    const data = e.data as { execution_id?: unknown };
    switch (e.type) {
      case 'ExecutionRequested':
        if (isAgent(e.metadata) && typeof data.execution_id === 'string') byAgent.add(data.execution_id);
        break;
      case 'ApprovalRequested': {
        const { approval_id } = e.data as { approval_id?: unknown };
        if (typeof approval_id === 'string' && typeof data.execution_id === 'string') approvals.set(approval_id, data.execution_id);
        break;
      }
      case 'ApprovalDenied': {
        const { approval_id } = e.data as { approval_id?: unknown };
        const executionId = typeof approval_id === 'string' ? approvals.get(approval_id) : undefined;
        if (executionId !== undefined && byAgent.has(executionId) && !cancelled) end = { executionId, position: e.streamPosition };
        break;
      }
      case 'TaskCompleted':
        closed = true;
        break;
      case 'SessionReopened':
        closed = false;
        break;
      case 'TurnStarted':
        // A turn that starts after the end reads it with its first model call.
        end = null;
        cancelled = false;
        break;
      case 'TurnEnded': {
        const { status, seen_version } = e.data as { status?: unknown; seen_version?: unknown };
        cancelled = status === 'cancelled';
        if (end === null) break;
        // A turn that failed or was cancelled after the end: the operator or the limits stopped the agent; it
        // does not start again on its own. A turn recorded before seen_version existed counts as having seen.
        if (status !== 'completed' || typeof seen_version !== 'number' || seen_version >= end.position) end = null;
        break;
      }
      default:
        if (ENDS.has(e.type) && typeof data.execution_id === 'string' && byAgent.has(data.execution_id) && !cancelled) end = { executionId: data.execution_id, position: e.streamPosition };
    }
  }
  return closed || end === null ? null : end.executionId;
}

/** The built-in agent: an external agent (an MCP client, named in metadata.client) carries on by itself. */
function isAgent(metadata: Record<string, unknown>): boolean {
  const actor = metadata.actor as { role?: unknown } | undefined;
  // A projected event reads a key it lacks as null.
  return actor?.role === 'agent' && (metadata.client === undefined || metadata.client === null);
}
