import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/domain/session/decide.ts';
import type { SessionEvent } from '../../../src/domain/session/events.ts';
import { evolve, type SessionState } from '../../../src/domain/session/state.ts';
import type { SessionCommandInput } from '../../../src/domain/session/decide.ts';
import {
  approvalRequested,
  assistantMessage,
  fold,
  goalSet,
  meta,
  planProposed,
  started,
  stepUpdated,
  taskCompleted,
  toolCompleted,
  toolRequested,
  userMessage,
} from './given.ts';

/** Freezes objects and arrays all the way down; a Map cannot be frozen, so its writers are made to throw. */
function deepFreeze<T>(value: T): T {
  // States share untouched parts (the initial state's empty maps): freeze each object once.
  if (typeof value === 'object' && value !== null && Object.isFrozen(value)) return value;
  if (value instanceof Map) {
    for (const [key, item] of value) {
      deepFreeze(key);
      deepFreeze(item);
    }
    for (const writer of ['set', 'delete', 'clear']) {
      Object.defineProperty(value, writer, {
        value: () => {
          throw new TypeError(`${writer} on a frozen Map`);
        },
      });
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return Object.freeze(value);
}

const richHistory: SessionEvent[] = [
  started,
  userMessage('u-1'),
  goalSet('g-1'),
  planProposed(1, 3),
  stepUpdated(1, 1, 'pending', 'running'),
  toolRequested('tc-1', 'a-1'),
  toolRequested('tc-2', 'a-1'),
  toolCompleted('tc-1'),
  approvalRequested('ap-1'),
  approvalRequested('ap-2'),
];

// One of every event type, each valid to apply after richHistory.
const everyEvent: SessionEvent[] = [
  { type: 'SessionStarted', data: { session_id: 's-1' } },
  { type: 'SessionReopened', data: { previous_status: 'done' } },
  userMessage('u-2'),
  assistantMessage('a-1'),
  toolRequested('tc-3', 'a-1'),
  toolCompleted('tc-2'),
  goalSet('g-2'),
  { type: 'GoalSuperseded', data: { goal_id: 'g-1', superseded_by: 'g-2' } },
  planProposed(2, 1),
  { type: 'PlanStepsReplaced', data: { by_generation: 2, steps: [{ generation: 1, seq: 2 }] } },
  stepUpdated(1, 1, 'running', 'done'),
  taskCompleted('success', 'g-1'),
  approvalRequested('ap-3'),
  { type: 'ApprovalGranted', data: { approval_id: 'ap-1' } },
  { type: 'ApprovalDenied', data: { approval_id: 'ap-1', reason: 'no' } },
  { type: 'ApprovalExpired', data: { approval_id: 'ap-1' } },
  { type: 'ApprovalCancelled', data: { approval_id: 'ap-1', reason: 'moved on' } },
  { type: 'TurnFailed', data: { reason: 'provider_error', detail: '502' } },
  { type: 'SessionDeleted', data: { reason: null } },
];

const everyCommand: SessionCommandInput[] = [
  { type: 'post_user_message', text: 'hi' },
  { type: 'record_assistant_message', text: 'hello' },
  { type: 'record_tool_call_requested', tool_call_id: 'tc-9', name: 'run', args: {} },
  { type: 'record_tool_call_completed', tool_call_id: 'tc-2', result: 'ok' },
  { type: 'set_goal', goal: 'another goal' },
  { type: 'propose_plan', steps: [{ title: 'new' }] },
  { type: 'update_plan_step', seq: 1, status: 'done' },
  { type: 'complete_task', outcome: 'success', summary: 'done' },
  { type: 'delete_session', reason: null },
];

describe('evolve', () => {
  it.each(everyEvent.map((event) => [event.type, event] as const))('applies %s without touching the state it was given', (_, event) => {
    const state = deepFreeze(fold(...richHistory));
    const before = structuredClone(state);
    evolve(state, event);
    expect(state).toEqual(before);
  });

  it.each(everyCommand.map((command) => [command.type, command] as const))('lets decide %s on a frozen state', (_, command) => {
    const state = deepFreeze(fold(...richHistory));
    expect(decide(command, state, meta).length).toBeGreaterThan(0);
  });

  it('folds a session into what its rules need', () => {
    expect(fold(...richHistory)).toEqual({
      status: 'active',
      openGoal: { goalId: 'g-1', goal: 'goal g-1' },
      planGeneration: 1,
      steps: [
        { generation: 1, seq: 1, title: 'step 1', status: 'running' },
        { generation: 1, seq: 2, title: 'step 2', status: 'pending' },
        { generation: 1, seq: 3, title: 'step 3', status: 'pending' },
      ],
      turnMessageId: 'a-1',
      toolCalls: new Map([
        ['tc-1', 'completed'],
        ['tc-2', 'requested'],
      ]),
      pendingApprovalIds: ['ap-1', 'ap-2'],
      executions: new Map(),
      approvals: new Map([
        ['ap-1', { approvalId: 'ap-1', executionId: 'exec-ap-1', expiresAt: '2026-07-20T11:00:00.000Z', status: 'pending' }],
        ['ap-2', { approvalId: 'ap-2', executionId: 'exec-ap-2', expiresAt: '2026-07-20T11:00:00.000Z', status: 'pending' }],
      ]),
      failuresByHash: new Map(),
      owner: { role: 'agent', id: 'nomos' },
      assentUntil: null,
      assentFor: null,
      openTurn: null,
    } satisfies SessionState);
  });

  it.each([
    ['ApprovalGranted', { type: 'ApprovalGranted', data: { approval_id: 'ap-1' } }],
    ['ApprovalDenied', { type: 'ApprovalDenied', data: { approval_id: 'ap-1', reason: 'too risky' } }],
    ['ApprovalExpired', { type: 'ApprovalExpired', data: { approval_id: 'ap-1' } }],
    ['ApprovalCancelled', { type: 'ApprovalCancelled', data: { approval_id: 'ap-1', reason: 'moved on' } }],
  ] as const)('stops counting an approval as pending once %s', (_, event) => {
    expect(fold(...richHistory, event).pendingApprovalIds).toEqual(['ap-2']);
  });

  it('closes the session and its goal when the task completes, and opens it again on reopen', () => {
    const failed = fold(...richHistory, taskCompleted('failed', 'g-1'));
    expect(failed).toMatchObject({ status: 'failed', openGoal: null });
    expect(evolve(failed, { type: 'SessionReopened', data: { previous_status: 'failed' } })).toMatchObject({ status: 'active', openGoal: null });
  });

  it('marks replaced steps as replaced, and a superseded goal as no longer open', () => {
    const state = fold(
      ...richHistory,
      { type: 'PlanStepsReplaced', data: { by_generation: 2, steps: [{ generation: 1, seq: 2 }, { generation: 1, seq: 3 }] } },
      planProposed(2, 1),
      { type: 'GoalSuperseded', data: { goal_id: 'g-1', superseded_by: 'g-2' } },
    );
    expect(state.steps.map((s) => `${s.generation}.${s.seq}:${s.status}`)).toEqual(['1.1:running', '1.2:replaced', '1.3:replaced', '2.1:pending']);
    expect(state.planGeneration).toBe(2);
    expect(state.openGoal).toBeNull();
  });

  it('marks a deleted session deleted', () => {
    expect(fold(...richHistory, { type: 'SessionDeleted', data: { reason: 'test' } }).status).toBe('deleted');
  });
});
