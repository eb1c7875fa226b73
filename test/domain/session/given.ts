// Given events → when command → then events: folds the given events with evolve and asks decide, with fixed metadata.
import { NotFound, RuleViolation, type CommandMetadata } from '../../../src/domain/messages.ts';
import { decide, type SessionCommandInput } from '../../../src/domain/session/decide.ts';
import type { Outcome, SessionEvent, StepStatus } from '../../../src/domain/session/events.ts';
import { evolve, initialSessionState, type SessionState } from '../../../src/domain/session/state.ts';

/** The id decide gives anything the command under test creates. */
export const COMMAND_ID = 'cmd-new';

export const meta: CommandMetadata = {
  commandId: COMMAND_ID,
  actor: { role: 'agent', id: 'nomos' },
  correlationId: 'corr-1',
  causationId: 'cause-1',
  now: '2026-07-20T10:00:00.000Z',
};

export function given(...events: SessionEvent[]) {
  const state = fold(...events);
  return {
    when: (command: SessionCommandInput): SessionEvent[] => decide(command, state, meta),
    /** The rule the command breaks; fails the test if the command is accepted or refused otherwise. */
    violates: (command: SessionCommandInput): RuleViolation => refusal(RuleViolation, () => decide(command, state, meta)),
    /** The NotFound the command is refused with; fails the test if the command is accepted or refused otherwise. */
    isNotFound: (command: SessionCommandInput): NotFound => refusal(NotFound, () => decide(command, state, meta)),
  };
}

function refusal<E extends Error>(kind: new (...args: never[]) => E, attempt: () => SessionEvent[]): E {
  let events: SessionEvent[];
  try {
    events = attempt();
  } catch (error) {
    if (error instanceof kind) return error;
    throw error;
  }
  throw new Error(`expected the command to be refused with ${kind.name}, but it decided ${JSON.stringify(events)}`);
}

export function fold(...events: SessionEvent[]): SessionState {
  return events.reduce(evolve, initialSessionState);
}

// Event builders, so each test shows only the facts it depends on.
/** Started by the agent the metadata above names, so its commands are the owner's. */
export const started: SessionEvent = { type: 'SessionStarted', data: { session_id: 's-1', owner: { role: 'agent', id: 'nomos' } } };
export const deleted: SessionEvent = { type: 'SessionDeleted', data: { reason: null } };

export const userMessage = (message_id: string, text = 'hello'): SessionEvent => ({ type: 'UserMessagePosted', data: { message_id, text } });
export const assistantMessage = (message_id: string, text = 'done'): SessionEvent => ({ type: 'AssistantMessageRecorded', data: { message_id, text } });
export const toolRequested = (tool_call_id: string, message_id: string): SessionEvent => ({
  type: 'ToolCallRequested',
  data: { tool_call_id, message_id, name: 'run', args: {} },
});
export const toolCompleted = (tool_call_id: string): SessionEvent => ({
  type: 'ToolCallCompleted',
  data: { tool_call_id, result: 'ok', error: null, result_original_bytes: null },
});

export const goalSet = (goal_id: string, goal = `goal ${goal_id}`): SessionEvent => ({ type: 'GoalSet', data: { goal_id, goal, title: goal } });
export const taskCompleted = (outcome: Outcome, goal_id: string | null = null): SessionEvent => ({
  type: 'TaskCompleted',
  data: { goal_id, outcome, summary: 'summary', status: outcome === 'failed' ? 'failed' : 'done' },
});

export const planProposed = (generation: number, stepCount: number): SessionEvent => ({
  type: 'PlanProposed',
  data: { generation, steps: Array.from({ length: stepCount }, (_, i) => ({ seq: i + 1, title: `step ${i + 1}` })) },
});
export const stepUpdated = (generation: number, seq: number, from: StepStatus, status: StepStatus): SessionEvent => ({
  type: 'PlanStepUpdated',
  data: { generation, seq, from, status, closed_by_task: false },
});

export const approvalRequested = (approval_id: string): SessionEvent => ({
  type: 'ApprovalRequested',
  data: {
    approval_id,
    execution_id: `exec-${approval_id}`,
    command: 'systemctl restart rclone',
    target: 'lxc:rclone',
    risk_class: 'service_restart',
    binding: 'b',
    expires_at: '2026-07-20T11:00:00.000Z',
  },
});
