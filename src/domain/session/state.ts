// What a session's deciders need to know, folded from its events. Holds only what a rule reads;
// everything a client wants to see lives in the read models.
import type { SessionEvent, StepStatus } from './events.ts';

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

export interface SessionState {
  readonly status: SessionStatus;
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
}

export const initialSessionState: SessionState = {
  status: 'none',
  openGoal: null,
  planGeneration: 0,
  steps: [],
  turnMessageId: null,
  toolCalls: new Map(),
  pendingApprovalIds: [],
};

export function evolve(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted':
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
    case 'ApprovalRequested':
      return { ...state, pendingApprovalIds: [...state.pendingApprovalIds, event.data.approval_id] };
    case 'ApprovalGranted':
    case 'ApprovalDenied':
    case 'ApprovalExpired':
    case 'ApprovalCancelled': {
      const { approval_id } = event.data;
      return { ...state, pendingApprovalIds: state.pendingApprovalIds.filter((id) => id !== approval_id) };
    }
    case 'TurnFailed':
      // The turn's assistant message stays current: a retry within the same turn continues it.
      return state;
    case 'SessionDeleted':
      return { ...state, status: 'deleted' };
    default: {
      const unhandled: never = event;
      throw new Error(`evolve: unhandled session event ${JSON.stringify(unhandled)}`);
    }
  }
}
