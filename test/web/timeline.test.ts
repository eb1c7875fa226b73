// The session page's timeline (web/src/components/sessions/timeline.ts), a pure fold of the session's events and
// tool calls: messages, tool calls, each command's steps where they happened, what a call wrote; the counts the
// headline shows, why they differ in words, and the freshness line in words.
import { describe, expect, it } from 'vitest';
import { buildTimeline, countWords, countsOf, freshnessWords } from '../../web/src/components/sessions/timeline.ts';
import type { StoredEventView } from '../../web/src/lib/types.ts';
import type { ToolCallView } from '../../web/src/components/sessions/session-types.ts';

const AGENT = { role: 'agent', id: 'nomos' };
const OPERATOR = { role: 'operator', id: 'ana' };

function log(): { events: StoredEventView[]; add: (type: string, data: Record<string, unknown>, actor?: { role: string; id?: string }) => void } {
  const events: StoredEventView[] = [];
  return {
    events,
    add: (type, data, actor = AGENT) => {
      const position = 100 + events.length;
      events.push({ event_id: `e${position}`, type, stream_position: events.length + 1, position, data, metadata: { actor }, recorded_at: new Date(Date.UTC(2025, 0, 1, 0, 0, events.length)).toISOString() });
    },
  };
}

function call(id: string, seq: number, name: string, args: Record<string, unknown>, result: unknown, messageId = 'm1'): ToolCallView {
  return { id, name, args, result, error: null, status: 'completed', message_id: messageId, seq, requested_at: '2025-01-01T00:00:00.000Z', completed_at: '2025-01-01T00:00:01.000Z', duration_ms: 1000, actor: null, client: null };
}

describe('the session timeline', () => {
  // A turn: a goal and a lookup (no command), a run that succeeds, a run that waits for an approval; the agent
  // answers; the operator approves later and it runs; then a command sent straight to the API, and a direct goal.
  const { events, add } = log();
  add('UserMessagePosted', { message_id: 'u1', text: 'the backup is broken' });
  add('ToolCallRequested', { tool_call_id: 'g', message_id: 'm1', name: 'set_goal', args: { goal: 'Fix the backup' } });
  add('GoalSet', { goal_id: 'goal1', goal: 'Fix the backup', title: 'Fix the backup' });
  add('ToolCallCompleted', { tool_call_id: 'g' });
  add('ToolCallRequested', { tool_call_id: 'k', message_id: 'm1', name: 'search_knowledge', args: { query: 'backup' } });
  add('ToolCallCompleted', { tool_call_id: 'k' });
  add('ToolCallRequested', { tool_call_id: 'r1', message_id: 'm1', name: 'run', args: { target: 'host:a', command: 'uptime' } });
  add('ExecutionRequested', { execution_id: 'x1', target: 'host:a', command: 'uptime', verdict: { risk_class: 'read_only', decision: 'allow' } });
  add('ExecutionStarted', { execution_id: 'x1' });
  add('ExecutionSucceeded', { execution_id: 'x1', exit_code: 0, stdout_tail: 'up 3 days', stderr_tail: '', duration_ms: 12 });
  add('ToolCallCompleted', { tool_call_id: 'r1' });
  add('ToolCallRequested', { tool_call_id: 'r2', message_id: 'm1', name: 'run', args: { target: 'host:a', command: 'systemctl restart backup' } });
  add('ExecutionRequested', { execution_id: 'x2', target: 'host:a', command: 'systemctl restart backup', verdict: { risk_class: 'service_restart', decision: 'ask' } });
  add('ApprovalRequested', { approval_id: 'a2', execution_id: 'x2', command: 'systemctl restart backup', target: 'host:a' });
  add('ToolCallCompleted', { tool_call_id: 'r2' });
  add('AssistantMessageRecorded', { message_id: 'm1', text: 'The restart waits for your approval.' });
  add('ApprovalGranted', { approval_id: 'a2' }, OPERATOR);
  add('ExecutionStarted', { execution_id: 'x2' }, OPERATOR);
  add('ExecutionSucceeded', { execution_id: 'x2', exit_code: 0, stdout_tail: '', stderr_tail: '', duration_ms: 40 }, OPERATOR);
  add('ExecutionRequested', { execution_id: 'x3', target: 'host:b', command: 'df -h', verdict: { risk_class: 'read_only', decision: 'allow' } });
  add('ExecutionRefused', { execution_id: 'x3', reason: 'unreachable', detail: 'connection refused' });
  add('GoalSet', { goal_id: 'goal2', goal: 'Check the disks', title: 'Check the disks' }, OPERATOR);
  add('UserMessagePosted', { message_id: 'u2', text: 'thanks' });

  const calls = [
    call('g', 1, 'set_goal', { goal: 'Fix the backup' }, { goal_id: 'goal1' }),
    call('k', 2, 'search_knowledge', { query: 'backup' }, []),
    call('r1', 3, 'run', { target: 'host:a', command: 'uptime' }, { status: 'succeeded', execution_id: 'x1', exit_code: 0 }),
    call('r2', 4, 'run', { target: 'host:a', command: 'systemctl restart backup' }, { status: 'approval_required', execution_id: 'x2', approval_id: 'a2' }),
  ];
  // Given out of order: the timeline orders by position.
  const timeline = buildTimeline([...events].reverse(), calls);

  it('puts messages, tool calls, commands and their approvals where they happened in the log', () => {
    expect(timeline.entries.map((e) => (e.kind === 'execution' ? `execution ${e.executionId}${e.first ? '' : ' (continued)'}` : e.kind === 'calls' ? `calls ${e.calls.map((c) => c.id).join(',')}` : e.kind === 'record' ? `record ${e.event.type}` : `${e.role}: ${e.text}`))).toEqual([
      'user: the backup is broken',
      'calls g,k',
      'execution x1',
      'execution x2',
      'assistant: The restart waits for your approval.',
      'execution x2 (continued)',
      'execution x3',
      'record GoalSet',
      'user: thanks',
    ]);
    const [, , first, waiting, , later, direct] = timeline.entries;
    if (first?.kind !== 'execution' || waiting?.kind !== 'execution' || later?.kind !== 'execution' || direct?.kind !== 'execution') throw new Error('not executions');
    expect(first.call?.id).toBe('r1');
    expect(first.steps.map((s) => s.kind)).toEqual(['requested', 'started', 'succeeded']);
    expect(waiting.call?.id).toBe('r2');
    expect(waiting.steps.map((s) => s.kind)).toEqual(['requested', 'approval_requested']);
    // The approval came later, by the operator: its own entry, after the assistant's answer.
    expect(later.call).toBeNull();
    expect(later.steps.map((s) => [s.kind, s.actor?.id])).toEqual([['granted', 'ana'], ['started', 'ana'], ['succeeded', 'ana']]);
    expect(direct.call).toBeNull();
    expect(direct.steps.map((s) => s.kind)).toEqual(['requested', 'refused']);
  });

  it('keeps what a call wrote with that call, and ties executions to the calls that asked for them', () => {
    expect(timeline.wrote.get('g')?.map((e) => e.type)).toEqual(['GoalSet']);
    expect(timeline.wrote.has('k')).toBe(false);
    expect([...timeline.callOf.entries()]).toEqual([['x1', 'r1'], ['x2', 'r2']]);
  });

  it('counts off the same lists, and says in words why tool calls and executions differ', () => {
    const executions = [{ id: 'x1', status: 'succeeded' }, { id: 'x2', status: 'succeeded' }, { id: 'x3', status: 'refused' }];
    const counts = countsOf(calls, executions, timeline.callOf);
    expect(counts).toEqual({ toolCalls: 4, byName: [['run', 2], ['search_knowledge', 1], ['set_goal', 1]], executions: 3, fromToolCalls: 2, failed: 1, runCallsWithoutExecution: 0 });
    expect(countWords(counts)).toEqual(['2 executions asked for by tool calls; 1 execution sent straight to the API (its run or inspect_path command), not by a tool call.']);
  });

  it('explains the README tour’s session: one recorded run call, seven commands sent straight to the API', () => {
    const recorded = [call('t1', 1, 'run', { target: 'lxc:rclone', command: 'systemctl status rclone-backup.timer' }, { exit_code: 0, stdout: 'active (waiting)' })];
    const seven = Array.from({ length: 7 }, (_, i) => ({ id: `x${i}`, status: i === 6 ? 'refused' : 'succeeded' }));
    const counts = countsOf(recorded, seven, new Map());
    expect(counts.toolCalls).toBe(1);
    expect(counts.executions).toBe(7);
    expect(countWords(counts)).toEqual([
      'All 7 executions were sent straight to the API (its run or inspect_path command), not by a tool call.',
      '1 run or inspect_path call started no execution here: its result was recorded by the client, or the command was refused before it was recorded.',
    ]);
    expect(countWords(countsOf([], [], new Map()))).toEqual([]);
  });

  it('says how fresh the page is in words, not as a bare position', () => {
    expect(freshnessWords(54, 54)).toBe('Up to date: shows everything recorded up to event #54, the latest in the log');
    expect(freshnessWords(54, null)).toBe('Up to date: shows everything recorded up to event #54, the latest in the log');
    expect(freshnessWords(54, 60)).toBe('Shows what was recorded up to event #54; the log has reached event #60, catching up…');
  });
});
