// What the fitter keeps of the part of a session it folds: one line per fact from the events (what the user
// asked, goals, plans, commands with their approvals and outcomes, tasks), never the model's words; and the
// session's goals and current plan, whole.
import { describe, expect, it } from 'vitest';
import { digestLines } from '../../src/agent/context-digest.ts';
import { sessionStateLines } from '../../src/agent/context-state.ts';
import type { SessionEvent } from '../../src/domain/session/events.ts';

const ev = <T extends SessionEvent['type']>(type: T, data: Extract<SessionEvent, { type: T }>['data']) => ({ type, data }) as SessionEvent;

const requested = (id: string, target: string, command: string) =>
  ev('ExecutionRequested', { execution_id: id, target, command, verdict: { risk_class: 'config_mutation', reason: 'r', rule: 'x', inner_commands: [] }, rules_version: '1', command_hash: id, binding: 'b', known_long: false });
const approval = (id: string, executionId: string, risk: string) =>
  ev('ApprovalRequested', { approval_id: id, execution_id: executionId, command: 'c', target: 't', risk_class: risk, binding: 'b', expires_at: '2026-01-01T00:00:00.000Z' });

const EVENTS: SessionEvent[] = [
  ev('UserMessagePosted', { message_id: 'u1', text: 'The NFS export\nof strong is   read-only again' }),
  ev('GoalSet', { goal_id: 'g1', goal: 'Make the NFS export of host:strong writable', title: 't' }),
  ev('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'Look' }, { seq: 2, title: 'Fix' }] }),
  ev('ToolCallRequested', { tool_call_id: 'c1', message_id: 'a1', name: 'run', args: { target: 'host:strong', command: 'chown :10000 /mnt/x' } }),
  requested('e1', 'host:strong', 'chown :10000 /mnt/x'),
  approval('a1', 'e1', 'config_mutation'),
  ev('ToolCallCompleted', { tool_call_id: 'c1', result: { status: 'approval_required' }, error: null, result_original_bytes: null }),
  ev('AssistantMessageRecorded', { message_id: 'a1', text: 'I asked for approval, trust me.' }),
  ev('ApprovalGranted', { approval_id: 'a1' }),
  ev('ExecutionStarted', { execution_id: 'e1' }),
  ev('ExecutionSucceeded', { execution_id: 'e1', exit_code: 0, stdout_tail: '', stderr_tail: '', duration_ms: 5 }),
  ev('ToolCallRequested', { tool_call_id: 'c2', message_id: 'a2', name: 'run', args: {} }),
  requested('e2', 'host:strong', 'rm -rf /mnt/x/tmp'),
  approval('a2', 'e2', 'destructive'),
  ev('ToolCallCompleted', { tool_call_id: 'c2', result: null, error: null, result_original_bytes: null }),
  ev('ApprovalDenied', { approval_id: 'a2', reason: 'not on a Friday' }),
  requested('e3', 'lxc:rclone', 'systemctl restart rclone'),
  approval('a3', 'e3', 'config_mutation'),
  ev('ApprovalExpired', { approval_id: 'a3' }),
  requested('e4', 'lxc:rclone', 'mount -a'),
  ev('ExecutionRefused', { execution_id: 'e4', reason: 'retry_cap', detail: 'failed twice' }),
  requested('e5', 'vm:zimaos', 'sleep 99'),
  ev('ExecutionStarted', { execution_id: 'e5' }),
  ev('ExecutionFailed', { execution_id: 'e5', exit_code: null, signal: 'SIGKILL', error: 'lost: the server running it stopped', stdout_tail: '', stderr_tail: '', duration_ms: 5 }),
  ev('TaskCompleted', { goal_id: 'g1', outcome: 'partial', summary: 'Export writable; the cleanup was denied.', status: 'done' }),
];

describe('digestLines', () => {
  it('tells each fact once, commands with their approvals and outcomes, and leaves out what the model said', () => {
    expect(digestLines(EVENTS, EVENTS.length)).toEqual([
      '- user: The NFS export of strong is read-only again',
      '- goal set: Make the NFS export of host:strong writable',
      '- plan proposed (generation 1): 2 steps',
      '- run on host:strong: chown :10000 /mnt/x → approval asked (config_mutation); approved; succeeded (exit 0) [tool_call_id "c1"]',
      '- run on host:strong: rm -rf /mnt/x/tmp → approval asked (destructive); denied: not on a Friday [tool_call_id "c2"]',
      '- run on lxc:rclone: systemctl restart rclone → approval asked (config_mutation); approval expired',
      '- run on lxc:rclone: mount -a → refused (retry_cap: failed twice)',
      '- run on vm:zimaos: sleep 99 → failed (exit null, signal SIGKILL: lost: the server running it stopped)',
      '- task completed (partial): Export writable; the cleanup was denied.',
    ]);
  });

  it('reads only the events before the cut', () => {
    expect(digestLines(EVENTS, 6).slice(-1)).toEqual(['- run on host:strong: chown :10000 /mnt/x → approval asked (config_mutation) [tool_call_id "c1"]']);
    expect(digestLines(EVENTS, 5).slice(-1)).toEqual(['- run on host:strong: chown :10000 /mnt/x → no outcome yet [tool_call_id "c1"]']);
    expect(digestLines(EVENTS, 0)).toEqual([]);
  });

  it('keeps a line short', () => {
    const [line] = digestLines([requested('e1', 'host:strong', `echo ${'x'.repeat(500)}`)], 1);
    expect(line).toBe(`- run on host:strong: echo ${'x'.repeat(154)}… → no outcome yet`);
  });
});

describe('sessionStateLines', () => {
  it('is null for a session without goal or plan', () => {
    expect(sessionStateLines([ev('UserMessagePosted', { message_id: 'u', text: 'hi' })])).toBeNull();
  });

  it('lists every goal with what became of it, and the current plan step by step', () => {
    expect(
      sessionStateLines([
        ev('GoalSet', { goal_id: 'g1', goal: 'Back up the photos', title: 't' }),
        ev('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'Look' }, { seq: 2, title: 'Copy' }] }),
        ev('PlanStepUpdated', { generation: 1, seq: 1, from: 'pending', status: 'running', closed_by_task: false }),
        ev('GoalSet', { goal_id: 'g2', goal: 'Back up the photos and the music', title: 't' }),
        ev('GoalSuperseded', { goal_id: 'g1', superseded_by: 'g2' }),
        ev('PlanStepsReplaced', { by_generation: 2, steps: [{ generation: 1, seq: 2 }] }),
        ev('PlanProposed', { generation: 2, steps: [{ seq: 1, title: 'Copy the photos' }, { seq: 2, title: 'Copy the music' }] }),
        ev('PlanStepUpdated', { generation: 2, seq: 1, from: 'pending', status: 'running', closed_by_task: false }),
        ev('PlanStepUpdated', { generation: 2, seq: 1, from: 'running', status: 'done', closed_by_task: false }),
        ev('GoalSet', { goal_id: 'g3', goal: 'Check the disks', title: 't' }),
        ev('TaskCompleted', { goal_id: 'g3', outcome: 'success', summary: 's', status: 'done' }),
      ]),
    ).toEqual([
      'Goal (superseded): Back up the photos',
      'Goal: Back up the photos and the music',
      'Goal (completed: success): Check the disks',
      'Plan (generation 2):',
      '1. [done] Copy the photos',
      '2. [pending] Copy the music',
    ]);
  });
});
