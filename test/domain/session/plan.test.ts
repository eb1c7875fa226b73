import { describe, expect, it } from 'vitest';
import type { SessionEvent, StepStatus } from '../../../src/domain/session/events.ts';
import { given, planProposed, started, stepUpdated, taskCompleted } from './given.ts';

describe('propose_plan', () => {
  it('proposes the first plan as generation 1, numbering its steps from 1', () => {
    expect(given(started).when({ type: 'propose_plan', steps: [{ title: 'Check the timer', command: 'systemctl status rclone.timer', target: 'lxc:rclone' }, { title: 'Report' }] })).toEqual([
      {
        type: 'PlanProposed',
        data: {
          generation: 1,
          steps: [
            { seq: 1, title: 'Check the timer', command: 'systemctl status rclone.timer', target: 'lxc:rclone' },
            { seq: 2, title: 'Report' },
          ],
        },
      },
    ]);
  });

  it('replaces the pending steps of the earlier plan, and only those, before proposing the next generation', () => {
    const events = given(started, planProposed(1, 4), stepUpdated(1, 1, 'pending', 'running'), stepUpdated(1, 1, 'running', 'done'), stepUpdated(1, 2, 'pending', 'running')).when({
      type: 'propose_plan',
      steps: [{ title: 'Try another way' }],
    });
    expect(events).toEqual([
      { type: 'PlanStepsReplaced', data: { by_generation: 2, steps: [{ generation: 1, seq: 3 }, { generation: 1, seq: 4 }] } },
      { type: 'PlanProposed', data: { generation: 2, steps: [{ seq: 1, title: 'Try another way' }] } },
    ]);
  });

  it('does not replace steps a previous replacement already closed', () => {
    const replaced: SessionEvent = { type: 'PlanStepsReplaced', data: { by_generation: 2, steps: [{ generation: 1, seq: 1 }] } };
    const [first, second] = given(started, planProposed(1, 1), replaced, planProposed(2, 2)).when({ type: 'propose_plan', steps: [{ title: 'third try' }] });
    expect(first).toEqual({ type: 'PlanStepsReplaced', data: { by_generation: 3, steps: [{ generation: 2, seq: 1 }, { generation: 2, seq: 2 }] } });
    expect(second).toMatchObject({ type: 'PlanProposed', data: { generation: 3 } });
  });

  it('replaces nothing when no earlier step is pending', () => {
    const events = given(started, planProposed(1, 1), stepUpdated(1, 1, 'pending', 'skipped')).when({ type: 'propose_plan', steps: [{ title: 'next' }] });
    expect(events.map((e) => e.type)).toEqual(['PlanProposed']);
  });

  it('reopens a completed session, since a new plan is new work', () => {
    const events = given(started, taskCompleted('success')).when({ type: 'propose_plan', steps: [{ title: 'next' }] });
    expect(events.map((e) => e.type)).toEqual(['SessionReopened', 'PlanProposed']);
  });
});

describe('update_plan_step', () => {
  const update = (seq: number, status: 'running' | 'done' | 'skipped' | 'failed') => ({ type: 'update_plan_step', seq, status }) as const;

  it.each([
    ['pending', 'running', []],
    ['pending', 'skipped', []],
    ['running', 'done', [stepUpdated(1, 1, 'pending', 'running')]],
    ['running', 'skipped', [stepUpdated(1, 1, 'pending', 'running')]],
    ['running', 'failed', [stepUpdated(1, 1, 'pending', 'running')]],
  ] as const)('moves a step from %s to %s', (from, status, history) => {
    expect(given(started, planProposed(1, 2), ...history).when(update(1, status))).toEqual([
      { type: 'PlanStepUpdated', data: { generation: 1, seq: 1, from, status, closed_by_task: false } },
    ]);
  });

  it('refuses a transition a pending step cannot make, naming the ones it can', () => {
    const error = given(started, planProposed(1, 2)).violates(update(2, 'done'));
    expect(error.rule).toBe('invalid_step_transition');
    expect(error.message).toBe('step 2 is pending: it can become running or skipped, not done');
  });

  it('refuses a transition a running step cannot make, naming the ones it can', () => {
    const error = given(started, planProposed(1, 1), stepUpdated(1, 1, 'pending', 'running')).violates(update(1, 'running'));
    expect(error.rule).toBe('invalid_step_transition');
    expect(error.message).toBe('step 1 is running: it can become done, skipped or failed, not running');
  });

  it.each(['done', 'skipped', 'failed'] as const satisfies readonly StepStatus[])('refuses any change to a step that is %s', (finished) => {
    const history = finished === 'skipped' ? [stepUpdated(1, 1, 'pending', 'skipped')] : [stepUpdated(1, 1, 'pending', 'running'), stepUpdated(1, 1, 'running', finished)];
    const error = given(started, planProposed(1, 1), ...history).violates(update(1, 'running'));
    expect(error.rule).toBe('invalid_step_transition');
    expect(error.message).toContain(`step 1 is ${finished}: it can no longer change`);
  });

  it('refuses to start a step while an earlier one is still pending', () => {
    const error = given(started, planProposed(1, 3), stepUpdated(1, 1, 'pending', 'skipped')).violates(update(3, 'running'));
    expect(error.rule).toBe('step_order');
    expect(error.message).toBe('step 3 cannot start while step 2 is still pending; finish or skip step 2 first');
  });

  it('refuses to start a step while an earlier one is still running', () => {
    const error = given(started, planProposed(1, 2), stepUpdated(1, 1, 'pending', 'running')).violates(update(2, 'running'));
    expect(error.rule).toBe('step_order');
    expect(error.message).toBe('step 2 cannot start while step 1 is still running; finish or skip step 1 first');
  });

  it('starts a step once every earlier one is finished or skipped', () => {
    const history = [stepUpdated(1, 1, 'pending', 'running'), stepUpdated(1, 1, 'running', 'done'), stepUpdated(1, 2, 'pending', 'skipped')];
    expect(given(started, planProposed(1, 3), ...history).when(update(3, 'running'))).toEqual([
      { type: 'PlanStepUpdated', data: { generation: 1, seq: 3, from: 'pending', status: 'running', closed_by_task: false } },
    ]);
  });

  it('lets a later step be skipped while an earlier one is pending', () => {
    expect(given(started, planProposed(1, 3)).when(update(3, 'skipped'))).toHaveLength(1);
  });

  it('acts on the current generation only', () => {
    const history = [planProposed(1, 3), { type: 'PlanStepsReplaced', data: { by_generation: 2, steps: [1, 2, 3].map((seq) => ({ generation: 1, seq })) } } as const, planProposed(2, 2)];
    expect(given(started, ...history).when(update(1, 'running'))).toEqual([
      { type: 'PlanStepUpdated', data: { generation: 2, seq: 1, from: 'pending', status: 'running', closed_by_task: false } },
    ]);
    const error = given(started, ...history).violates(update(3, 'skipped'));
    expect(error.rule).toBe('unknown_step');
    expect(error.message).toBe('The current plan (generation 2) has steps 1 to 2, not 3; update one of those or propose a new plan.');
  });

  it('refuses when there is no plan', () => {
    const error = given(started).violates(update(1, 'running'));
    expect(error.rule).toBe('no_plan');
    expect(error.message).toContain('propose a plan first');
  });
});
