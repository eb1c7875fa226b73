import { describe, expect, it } from 'vitest';
import { COMMAND_ID, given, goalSet, started, taskCompleted } from './given.ts';

describe('set_goal', () => {
  it('sets the goal under the id of the command, titled by the goal', () => {
    expect(given(started).when({ type: 'set_goal', goal: 'Fix the rclone backup' })).toEqual([
      { type: 'GoalSet', data: { goal_id: COMMAND_ID, goal: 'Fix the rclone backup', title: 'Fix the rclone backup' } },
    ]);
  });

  it('supersedes the open goal rather than leaving it orphaned', () => {
    expect(given(started, goalSet('g-1')).when({ type: 'set_goal', goal: 'Fix the OOM instead' })).toEqual([
      { type: 'GoalSuperseded', data: { goal_id: 'g-1', superseded_by: COMMAND_ID } },
      { type: 'GoalSet', data: { goal_id: COMMAND_ID, goal: 'Fix the OOM instead', title: 'Fix the OOM instead' } },
    ]);
  });

  it('supersedes only the goal that is open, not one already superseded', () => {
    const supersede = { type: 'GoalSuperseded', data: { goal_id: 'g-1', superseded_by: 'g-2' } } as const;
    const [first] = given(started, goalSet('g-1'), supersede, goalSet('g-2')).when({ type: 'set_goal', goal: 'third' });
    expect(first).toEqual({ type: 'GoalSuperseded', data: { goal_id: 'g-2', superseded_by: COMMAND_ID } });
  });

  it('cuts the title at 120 characters without splitting an emoji', () => {
    const goal = 'ü'.repeat(100) + '🚀'.repeat(30);
    const [event] = given(started).when({ type: 'set_goal', goal });
    expect(event).toEqual({ type: 'GoalSet', data: { goal_id: COMMAND_ID, goal, title: 'ü'.repeat(100) + '🚀'.repeat(20) } });
  });

  it('keeps an emoji that is the 120th character whole', () => {
    const [event] = given(started).when({ type: 'set_goal', goal: 'a'.repeat(119) + '🚀' + 'b' });
    expect(event).toMatchObject({ data: { title: 'a'.repeat(119) + '🚀' } });
  });

  it('reopens a completed session and sets a second goal, leaving the completed one as it was', () => {
    expect(given(started, goalSet('g-1'), taskCompleted('success', 'g-1')).when({ type: 'set_goal', goal: 'Now check the timer' })).toEqual([
      { type: 'SessionReopened', data: { previous_status: 'done' } },
      { type: 'GoalSet', data: { goal_id: COMMAND_ID, goal: 'Now check the timer', title: 'Now check the timer' } },
    ]);
  });

  it('completes the second goal under its own id', () => {
    const reopened = { type: 'SessionReopened', data: { previous_status: 'done' } } as const;
    const [completed] = given(started, goalSet('g-1'), taskCompleted('success', 'g-1'), reopened, goalSet('g-2')).when({
      type: 'complete_task',
      outcome: 'partial',
      summary: 'timer checked',
    });
    expect(completed).toMatchObject({ type: 'TaskCompleted', data: { goal_id: 'g-2' } });
  });
});
