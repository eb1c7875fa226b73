// What a session's deciders need to know, folded from its events. Holds only what a rule reads;
// everything a client wants to see lives in the read models.
import type { Actor } from '../messages.ts';
import type { RefusalReason, SessionEvent, StepStatus } from './events.ts';

export type SessionStatus = 'none' | 'active' | 'done' | 'failed' | 'deleted';

export interface OpenGoal {
  readonly goalId: string;
  readonly goal: string;
}

export interface PlanStep {
  readonly generation: number;
  readonly seq: number;
  readonly title: string;
  readonly status: StepStatus;
}

export type ToolCallStatus = 'requested' | 'completed';

export type ExecutionStatus =
  | 'awaiting_approval'
  | 'approved'
  | 'runnable'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'timed_out'
  | 'refused'
  | 'denied'
  | 'expired'
  | 'cancelled';

export interface Execution {
  readonly executionId: string;
  readonly target: string;
  readonly command: string;
  readonly commandHash: string;
  readonly binding: string;
  readonly status: ExecutionStatus;
  readonly approvalId: string | null;
}

/**
 * How an attempt to run a command did not succeed. A refusal for unreachable, a host key mismatch or lost
 * counts as much as a failed run: the command was sent to run and did not. Refusals where nothing was
 * attempted (the cap itself, already running, a binding mismatch) are not attempts.
 */
export type UnsuccessfulAttempt = 'failed' | 'timed_out' | 'unreachable' | 'host_key_mismatch' | 'lost';

/**
 * A failed run whose server stopped before it ended: the sweep that finds it records an error starting with
 * 'lost' (src/execution/sweeps.ts), as the event has no field of its own for it.
 */
export function isLostRun(failed: { readonly error: string | null }): boolean {
  return failed.error?.startsWith('lost') === true;
}

function attemptRefused(reason: RefusalReason): UnsuccessfulAttempt | null {
  switch (reason) {
    case 'unreachable':
    case 'host_key_mismatch':
    case 'lost':
      return reason;
    case 'retry_cap':
    case 'already_running':
    case 'binding_mismatch':
    case 'session_deleted':
    case 'policy_denied':
      return null;
    default: {
      const unhandled: never = reason;
      throw new Error(`attemptRefused: unhandled reason ${String(unhandled)}`);
    }
  }
}

export interface Approval {
  readonly approvalId: string;
  readonly executionId: string;
  readonly expiresAt: string;
  readonly status: 'pending' | 'granted' | 'denied' | 'expired' | 'cancelled';
}

export interface SessionState {
  readonly status: SessionStatus;
  /** Whom the session belongs to: who started it, or whom an operator handed it to; null only before it starts. */
  readonly owner: Actor | null;
  readonly openGoal: OpenGoal | null;
  /** Generation of the current plan; 0 until the first plan is proposed. */
  readonly planGeneration: number;
  /** Steps of every generation, so complete_task can close steps an older plan left running. */
  readonly steps: readonly PlanStep[];
  /** The assistant message of the current turn, once a tool call or the final text created it. */
  readonly turnMessageId: string | null;
  /** A Map rather than a record: tool call ids come from the model and may be any string, `__proto__` included. */
  readonly toolCalls: ReadonlyMap<string, ToolCallStatus>;
  /** In the order they were requested, so the cancellations complete_task decides read in that order. */
  readonly pendingApprovalIds: readonly string[];
  readonly executions: ReadonlyMap<string, Execution>;
  readonly approvals: ReadonlyMap<string, Approval>;
  /** Attempts that did not succeed, per command hash, in order: what the retry cap counts, rebuilt from the events. */
  readonly failuresByHash: ReadonlyMap<string, readonly UnsuccessfulAttempt[]>;
  /** config_mutation runs without asking until then; null when no assent window is open. */
  readonly assentUntil: string | null;
  /** The one actor whose commands run under the assent window. */
  readonly assentFor: Actor | null;
  /** The agent's turn in progress, if any, and whether someone asked it to stop. */
  readonly openTurn: { readonly turnId: string; readonly cancelRequested: boolean } | null;
}

export const initialSessionState: SessionState = {
  status: 'none',
  owner: null,
  openGoal: null,
  planGeneration: 0,
  steps: [],
  turnMessageId: null,
  toolCalls: new Map(),
  pendingApprovalIds: [],
  executions: new Map(),
  approvals: new Map(),
  failuresByHash: new Map(),
  assentUntil: null,
  assentFor: null,
  openTurn: null,
};

function withExecution(state: SessionState, executionId: string, change: Partial<Execution>): SessionState {
  const current = state.executions.get(executionId);
  if (!current) return state;
  return { ...state, executions: new Map(state.executions).set(executionId, { ...current, ...change }) };
}

function withApproval(state: SessionState, approvalId: string, status: Approval['status']): SessionState {
  const current = state.approvals.get(approvalId);
  const approvals = current ? new Map(state.approvals).set(approvalId, { ...current, status }) : state.approvals;
  return { ...state, approvals, pendingApprovalIds: state.pendingApprovalIds.filter((id) => id !== approvalId) };
}

/** An execution that ended without success; counted once, and only when it was still on its way to run. */
function unsuccessful(state: SessionState, executionId: string, status: 'failed' | 'timed_out' | 'refused', attempt: UnsuccessfulAttempt | null): SessionState {
  const current = state.executions.get(executionId);
  const next = withExecution(state, executionId, { status });
  if (current === undefined || attempt === null || !['runnable', 'approved', 'running'].includes(current.status)) return next;
  const attempts = [...(next.failuresByHash.get(current.commandHash) ?? []), attempt];
  return { ...next, failuresByHash: new Map(next.failuresByHash).set(current.commandHash, attempts) };
}

/** The execution an approval decision moves, and where to. */
function afterDecision(state: SessionState, approvalId: string, status: ExecutionStatus): SessionState {
  const executionId = state.approvals.get(approvalId)?.executionId;
  return executionId === undefined ? state : withExecution(state, executionId, { status });
}

export function evolve(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted':
      return { ...state, status: 'active', owner: event.data.owner ?? null };
    case 'SessionHandedOver':
      return { ...state, owner: event.data.to };
    case 'SessionReopened':
      return { ...state, status: 'active' };
    case 'UserMessagePosted':
      return { ...state, turnMessageId: null };
    case 'AssistantMessageRecorded':
      return { ...state, turnMessageId: event.data.message_id };
    case 'ToolCallRequested':
      return {
        ...state,
        turnMessageId: event.data.message_id,
        toolCalls: new Map(state.toolCalls).set(event.data.tool_call_id, 'requested'),
      };
    case 'ToolCallCompleted':
      return { ...state, toolCalls: new Map(state.toolCalls).set(event.data.tool_call_id, 'completed') };
    case 'GoalSet':
      return { ...state, openGoal: { goalId: event.data.goal_id, goal: event.data.goal } };
    case 'GoalSuperseded':
      return state.openGoal?.goalId === event.data.goal_id ? { ...state, openGoal: null } : state;
    case 'PlanProposed': {
      const { generation } = event.data;
      const proposed = event.data.steps.map((step): PlanStep => ({ generation, seq: step.seq, title: step.title, status: 'pending' }));
      return { ...state, planGeneration: generation, steps: [...state.steps, ...proposed] };
    }
    case 'PlanStepsReplaced': {
      const replaced = event.data.steps;
      return {
        ...state,
        steps: state.steps.map((step) =>
          replaced.some((r) => r.generation === step.generation && r.seq === step.seq) ? { ...step, status: 'replaced' } : step,
        ),
      };
    }
    case 'PlanStepUpdated': {
      const { generation, seq, status } = event.data;
      return {
        ...state,
        steps: state.steps.map((step) => (step.generation === generation && step.seq === seq ? { ...step, status } : step)),
      };
    }
    case 'TaskCompleted':
      return { ...state, status: event.data.status, openGoal: null };
    case 'ExecutionRequested': {
      const d = event.data;
      const execution: Execution = {
        executionId: d.execution_id,
        target: d.target,
        command: d.command,
        commandHash: d.command_hash,
        binding: d.binding,
        status: 'runnable',
        approvalId: null,
      };
      return { ...state, executions: new Map(state.executions).set(d.execution_id, execution) };
    }
    case 'ExecutionRefused':
      return unsuccessful(state, event.data.execution_id, 'refused', attemptRefused(event.data.reason));
    case 'ExecutionStarted':
      return withExecution(state, event.data.execution_id, { status: 'running' });
    case 'ExecutionSucceeded':
      return withExecution(state, event.data.execution_id, { status: 'succeeded' });
    case 'ExecutionFailed':
      return unsuccessful(state, event.data.execution_id, 'failed', isLostRun(event.data) ? 'lost' : 'failed');
    case 'ExecutionTimedOut':
      return unsuccessful(state, event.data.execution_id, 'timed_out', 'timed_out');
    case 'ApprovalRequested': {
      const d = event.data;
      const approval: Approval = { approvalId: d.approval_id, executionId: d.execution_id, expiresAt: d.expires_at, status: 'pending' };
      const next = withExecution(state, d.execution_id, { status: 'awaiting_approval', approvalId: d.approval_id });
      return { ...next, approvals: new Map(next.approvals).set(d.approval_id, approval), pendingApprovalIds: [...next.pendingApprovalIds, d.approval_id] };
    }
    case 'ApprovalGranted':
      return afterDecision(withApproval(state, event.data.approval_id, 'granted'), event.data.approval_id, 'approved');
    case 'ApprovalDenied':
      return afterDecision(withApproval(state, event.data.approval_id, 'denied'), event.data.approval_id, 'denied');
    case 'ApprovalExpired':
      return afterDecision(withApproval(state, event.data.approval_id, 'expired'), event.data.approval_id, 'expired');
    case 'ApprovalCancelled':
      return afterDecision(withApproval(state, event.data.approval_id, 'cancelled'), event.data.approval_id, 'cancelled');
    case 'AssentOpened':
      return { ...state, assentUntil: event.data.until, assentFor: event.data.for ?? state.owner };
    case 'AssentClosed':
      return { ...state, assentUntil: null, assentFor: null };
    case 'TurnStarted':
      return { ...state, openTurn: { turnId: event.data.turn_id, cancelRequested: false } };
    case 'TurnCancelRequested':
      return state.openTurn?.turnId === event.data.turn_id ? { ...state, openTurn: { ...state.openTurn, cancelRequested: true } } : state;
    case 'TurnEnded':
      return state.openTurn?.turnId === event.data.turn_id ? { ...state, openTurn: null } : state;
    case 'TurnFailed':
      // The turn's assistant message stays current: a retry within the same turn continues it.
      return state;
    case 'ModelCallRecorded':
      return state;
    case 'SessionDeleted':
      return { ...state, status: 'deleted' };
    default: {
      const unhandled: never = event;
      throw new Error(`evolve: unhandled session event ${JSON.stringify(unhandled)}`);
    }
  }
}
