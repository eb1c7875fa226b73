import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../src/domain/session/events.ts';
import { approvalRequested, given, goalSet, planProposed, started, stepUpdated, taskCompleted } from './given.ts';

// Generation 1: step 1 done, step 2 running, step 3 replaced. Generation 2: step 1 running, step 2 skipped, step 3 pending.
const twoPlans: SessionEvent[] = [
  planProposed(1, 3),
  stepUpdated(1, 1, 'pending', 'running'),
  stepUpdated(1, 1, 'running', 'done'),
  stepUpdated(1, 2, 'pending', 'running'),
  { type: 'PlanStepsReplaced', data: { by_generation: 2, steps: [{ generation: 1, seq: 3 }] } },
  planProposed(2, 3),
  stepUpdated(2, 1, 'pending', 'running'),
  stepUpdated(2, 2, 'pending', 'skipped'),
];

const closedByTask = (generation: number, seq: number, from: 'pending' | 'running', status: 'done' | 'skipped'): SessionEvent => ({
  type: 'PlanStepUpdated',
  data: { generation, seq, from, status, closed_by_task: true },
});

describe('complete_task', () => {
  it('on success, marks every step still in flight done, in any generation, then completes the open goal', () => {
    expect(given(started, goalSet('g-1'), ...twoPlans).when({ type: 'complete_task', outcome: 'success', summary: 'backup fixed' })).toEqual([
      closedByTask(1, 2, 'running', 'done'),
      closedByTask(2, 1, 'running', 'done'),
      closedByTask(2, 3, 'pending', 'done'),
      { type: 'TaskCompleted', data: { goal_id: 'g-1', outcome: 'success', summary: 'backup fixed', status: 'done' } },
    ]);
  });

  it.each([
    ['partial', 'done'],
    ['failed', 'failed'],
  ] as const)('on %s, marks steps still in flight skipped and the session %s', (outcome, status) => {
    expect(given(started, ...twoPlans).when({ type: 'complete_task', outcome, summary: 'blocked on approval' })).toEqual([
      closedByTask(1, 2, 'running', 'skipped'),
      closedByTask(2, 1, 'running', 'skipped'),
      closedByTask(2, 3, 'pending', 'skipped'),
      { type: 'TaskCompleted', data: { goal_id: null, outcome, summary: 'blocked on approval', status } },
    ]);
  });

  it('cancels approvals still pending, and only those', () => {
    const granted = { type: 'ApprovalGranted', data: { approval_id: 'ap-2' } } as const;
    const events = given(started, approvalRequested('ap-1'), approvalRequested('ap-2'), granted, approvalRequested('ap-3')).when({
      type: 'complete_task',
      outcome: 'partial',
      summary: 'left for the operator',
    });
    expect(events).toEqual([
      { type: 'ApprovalCancelled', data: { approval_id: 'ap-1', reason: 'orphaned: task completed' } },
      { type: 'ApprovalCancelled', data: { approval_id: 'ap-3', reason: 'orphaned: task completed' } },
      { type: 'TaskCompleted', data: { goal_id: null, outcome: 'partial', summary: 'left for the operator', status: 'done' } },
    ]);
  });

  it.each([
    ['success', 'done'],
    ['failed', 'failed'],
  ] as const)('refuses a session whose task already ended with %s, and says how to reopen it', (outcome, status) => {
    const error = given(started, taskCompleted(outcome)).violates({ type: 'complete_task', outcome: 'success', summary: 'again' });
    expect(error.rule).toBe('session_closed');
    expect(error.message).toMatch(new RegExp(`already ${status}.*new user message or set a new goal`));
  });

  it('does not complete a goal it already completed', () => {
    const reopened = { type: 'SessionReopened', data: { previous_status: 'done' } } as const;
    const events = given(started, goalSet('g-1'), taskCompleted('success', 'g-1'), reopened).when({ type: 'complete_task', outcome: 'success', summary: 'follow-up answered' });
    expect(events).toEqual([{ type: 'TaskCompleted', data: { goal_id: null, outcome: 'success', summary: 'follow-up answered', status: 'done' } }]);
  });
});
