// The session decider: given the folded state and one command, the events that command produces,
// or the rule that refuses it. Plan and tool-call rules live beside it in decide-plan.ts and decide-tool-calls.ts.
import { NotFound, RuleViolation, type CommandMetadata } from '../messages.ts';
import type { SessionCommand, SessionExecutionCommand, SessionLifecycleCommand, SessionTurnCommand } from './commands.ts';
import { decideTurn } from './decide-turn.ts';
import { decideExecution } from './decide-execution.ts';
import { decideProposePlan, decideUpdatePlanStep } from './decide-plan.ts';
import { decideToolCallCompleted, decideToolCallRequested } from './decide-tool-calls.ts';
import type { SessionEvent } from './events.ts';
import { decideHandOver, requireWriter } from './owner.ts';
import type { SessionState } from './state.ts';

export type SessionCommandInput = SessionCommand | SessionLifecycleCommand | SessionExecutionCommand | SessionTurnCommand;

type CommandOf<T extends SessionCommandInput['type']> = Extract<SessionCommandInput, { type: T }>;

/** Goal titles label sessions in lists; longer goals keep their full text in `goal`. */
export const GOAL_TITLE_MAX_CHARS = 120;

export function decide(command: SessionCommandInput, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  if (command.type === 'start_session') return decideStartSession(command, state, meta);
  // A command that was running when its session was deleted still ran on the host: its end is recorded.
  if (state.status === 'deleted' && command.type === 'finish_execution') return decideExecution(command, state, meta);
  requireSession(state);
  requireWriter(state, meta);
  // Only what starts new work reopens a closed session: an agent's final text and tool results may
  // trail complete_task, and must not undo it.
  switch (command.type) {
    case 'post_user_message':
      return [...reopenIfClosed(state), { type: 'UserMessagePosted', data: { message_id: meta.commandId, text: command.text } }];
    case 'set_goal':
      return [...reopenIfClosed(state), ...decideSetGoal(command, state, meta)];
    case 'propose_plan':
      return [...reopenIfClosed(state), ...decideProposePlan(command, state)];
    case 'record_assistant_message':
      return [{ type: 'AssistantMessageRecorded', data: { message_id: state.turnMessageId ?? meta.commandId, text: command.text } }];
    case 'record_tool_call_requested':
      return decideToolCallRequested(command, state, meta);
    case 'record_tool_call_completed':
      return decideToolCallCompleted(command, state);
    case 'update_plan_step':
      return decideUpdatePlanStep(command, state);
    case 'complete_task':
      return decideCompleteTask(command, state, meta);
    case 'request_execution':
    case 'start_execution':
    case 'finish_execution':
    case 'refuse_execution':
    case 'approve':
    case 'deny':
    case 'expire_approval':
    case 'open_assent':
      return decideExecution(command, state, meta);
    case 'start_turn':
    case 'cancel_turn':
    case 'fail_turn':
    case 'end_turn':
    case 'record_model_call':
      return decideTurn(command, state);
    case 'delete_session':
      return decideDelete(command, state);
    case 'hand_over':
      return decideHandOver(command.to, state, meta);
    default: {
      const unhandled: never = command;
      throw new Error(`decide: unhandled session command ${JSON.stringify(unhandled)}`);
    }
  }
}

function decideStartSession(command: CommandOf<'start_session'>, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  if (state.status === 'deleted') {
    throw new RuleViolation('session_exists', `Session ${command.session_id} was deleted and its id cannot be reused; start a session with a new id.`);
  }
  if (state.status !== 'none') {
    throw new RuleViolation('session_exists', `Session ${command.session_id} already exists; send commands to it, or start a session with a new id.`);
  }
  return [{ type: 'SessionStarted', data: { session_id: command.session_id, owner: meta.actor } }];
}

function requireSession(state: SessionState): void {
  if (state.status === 'none') {
    throw new NotFound('session', 'There is no such session; check the session id, or start the session first.', 'session_not_found');
  }
  if (state.status === 'deleted') {
    throw new NotFound('session', 'This session was deleted; start a new session to continue.', 'session_deleted');
  }
}

function reopenIfClosed(state: SessionState): SessionEvent[] {
  return state.status === 'done' || state.status === 'failed' ? [{ type: 'SessionReopened', data: { previous_status: state.status } }] : [];
}

function decideSetGoal(command: CommandOf<'set_goal'>, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  const goal_id = meta.commandId;
  // Cut by code points, so an emoji at the boundary is kept whole or dropped, never halved.
  const title = Array.from(command.goal).slice(0, GOAL_TITLE_MAX_CHARS).join('');
  const set: SessionEvent = { type: 'GoalSet', data: { goal_id, goal: command.goal, title } };
  // The old goal is closed explicitly, so no goal is ever left open without a successor.
  if (state.openGoal === null) return [set];
  return [{ type: 'GoalSuperseded', data: { goal_id: state.openGoal.goalId, superseded_by: goal_id } }, set];
}

/**
 * Deleting closes what waits on the session: pending approvals are cancelled and executions not yet started are
 * refused, so no sweep or operator acts on them later; a running one is left to finish and record its end.
 */
function decideDelete(command: CommandOf<'delete_session'>, state: SessionState): SessionEvent[] {
  const cancelled = state.pendingApprovalIds.map((approval_id): SessionEvent => ({ type: 'ApprovalCancelled', data: { approval_id, reason: 'session deleted' } }));
  const refused = [...state.executions.values()]
    .filter((e) => e.status === 'runnable' || e.status === 'approved')
    .map((e): SessionEvent => ({ type: 'ExecutionRefused', data: { execution_id: e.executionId, reason: 'session_deleted', detail: 'The session was deleted before the command started; nothing ran.' } }));
  return [...cancelled, ...refused, { type: 'SessionDeleted', data: { reason: command.reason } }];
}

function decideCompleteTask(command: CommandOf<'complete_task'>, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  if (state.status === 'done' || state.status === 'failed') {
    throw new RuleViolation(
      'session_closed',
      `The session is already ${state.status}; post a new user message or set a new goal to reopen it, then complete that task.`,
    );
  }
  const { outcome, summary } = command;
  // Closing what is still in flight here spares the agent a round of bookkeeping calls, and a finished
  // session never shows a step as running or an approval as waiting.
  const closeAs = outcome === 'success' ? 'done' : 'skipped';
  const closedSteps = state.steps
    .filter((step) => step.status === 'pending' || step.status === 'running')
    .map((step): SessionEvent => ({
      type: 'PlanStepUpdated',
      data: { generation: step.generation, seq: step.seq, from: step.status, status: closeAs, closed_by_task: true },
    }));
  const cancelledApprovals = state.pendingApprovalIds.map(
    (approval_id): SessionEvent => ({ type: 'ApprovalCancelled', data: { approval_id, reason: 'orphaned: task completed' } }),
  );
  // Assent was given for this task: the next one asks again.
  const closedAssent: SessionEvent[] = state.assentUntil !== null && state.assentUntil > meta.now ? [{ type: 'AssentClosed', data: { reason: 'task completed' } }] : [];
  const completed: SessionEvent = {
    type: 'TaskCompleted',
    data: { goal_id: state.openGoal?.goalId ?? null, outcome, summary, status: outcome === 'failed' ? 'failed' : 'done' },
  };
  return [...closedSteps, ...cancelledApprovals, ...closedAssent, completed];
}
