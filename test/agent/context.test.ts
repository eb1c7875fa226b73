// The model's context is a fold over the session's events: messages, each tool call with what it returned
// (as shown, cuts marked), and what happened to executions the agent waited on.
import { describe, expect, it } from 'vitest';
import { buildModelMessages, shownResult } from '../../src/agent/context.ts';
import type { SessionEvent } from '../../src/domain/session/events.ts';

const ev = <T extends SessionEvent['type']>(type: T, data: Extract<SessionEvent, { type: T }>['data']) => ({ type, data }) as SessionEvent;

describe('buildModelMessages', () => {
  it('rebuilds a turn: user message, tool calls with their results, the final text', () => {
    const messages = buildModelMessages('SYSTEM', [
      ev('SessionStarted', { session_id: 's' }),
      ev('UserMessagePosted', { message_id: 'u1', text: 'is the backup ok?' }),
      ev('TurnStarted', { turn_id: 't1', trigger: 'user_message' }),
      ev('ToolCallRequested', { tool_call_id: 'c1', message_id: 'a1', name: 'run', args: { target: 'lxc:rclone', command: 'systemctl status x' } }),
      ev('ToolCallCompleted', { tool_call_id: 'c1', result: { status: 'succeeded' }, error: null, result_original_bytes: null }),
      ev('ToolCallRequested', { tool_call_id: 'c2', message_id: 'a1', name: 'get_entity', args: { slug: 'lxc:nope' } }),
      ev('ToolCallCompleted', { tool_call_id: 'c2', result: null, error: 'not in the inventory', result_original_bytes: null }),
      ev('AssistantMessageRecorded', { message_id: 'a1', text: 'It is fine.' }),
      ev('TurnEnded', { turn_id: 't1', status: 'completed', model_calls: 3 }),
    ]);
    expect(messages).toEqual([
      { role: 'system', content: 'SYSTEM' },
      { role: 'user', content: 'is the backup ok?' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'run', arguments: '{"target":"lxc:rclone","command":"systemctl status x"}' }] },
      { role: 'tool', toolCallId: 'c1', content: '{"status":"succeeded"}' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c2', name: 'get_entity', arguments: '{"slug":"lxc:nope"}' }] },
      { role: 'tool', toolCallId: 'c2', content: '{"error":"not in the inventory"}' },
      { role: 'assistant', content: 'It is fine.' },
    ]);
  });

  it('answers a tool call whose result was never recorded, so the context stays valid', () => {
    const messages = buildModelMessages('S', [
      ev('UserMessagePosted', { message_id: 'u1', text: 'go' }),
      ev('ToolCallRequested', { tool_call_id: 'c1', message_id: 'a1', name: 'run', args: {} }),
      ev('UserMessagePosted', { message_id: 'u2', text: 'hello?' }),
    ]);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(messages[3]).toMatchObject({ toolCallId: 'c1', content: expect.stringContaining('no result') });
  });

  it('tells a turn started by an execution’s end what ended, with its output', () => {
    const messages = buildModelMessages('S', [
      ev('ExecutionRequested', { execution_id: 'e1', target: 'host:strong', command: 'chown :10000 /mnt/x', verdict: { risk_class: 'config_mutation', reason: 'r', rule: 'chown', inner_commands: [] }, rules_version: '1', command_hash: 'h', binding: 'b', known_long: false }),
      ev('ExecutionSucceeded', { execution_id: 'e1', exit_code: 0, stdout_tail: 'ok', stderr_tail: '', duration_ms: 5 }),
      ev('TurnStarted', { turn_id: 't2', trigger: 'execution_finished' }),
    ]);
    expect(messages[1]).toMatchObject({ role: 'user' });
    expect((messages[1] as { content: string }).content).toMatch(/waiting on has ended[\s\S]*chown :10000 \/mnt\/x on host:strong\) succeeded[\s\S]*ok/);
  });

  it('tells it why an execution failed (lost with its server), and of a refusal that came after the approval — not of one its run already answered', () => {
    const requested = (id: string, command: string) =>
      ev('ExecutionRequested', { execution_id: id, target: 'host:strong', command, verdict: { risk_class: 'config_mutation', reason: 'r', rule: 'x', inner_commands: [] }, rules_version: '1', command_hash: id, binding: 'b', known_long: false });
    const messages = buildModelMessages('S', [
      requested('e1', 'sleep 25'),
      ev('ExecutionStarted', { execution_id: 'e1' }),
      ev('ExecutionFailed', { execution_id: 'e1', exit_code: null, signal: null, error: 'lost: the server running it stopped', stdout_tail: '', stderr_tail: '', duration_ms: 0 }),
      requested('e2', 'touch /x'),
      ev('ApprovalRequested', { approval_id: 'a2', execution_id: 'e2', command: 'touch /x', target: 'host:strong', risk_class: 'config_mutation', binding: 'b', expires_at: '2026-01-01T00:00:00.000Z' }),
      ev('ApprovalGranted', { approval_id: 'a2' }),
      ev('ExecutionRefused', { execution_id: 'e2', reason: 'unreachable', detail: 'no SSH key is configured' }),
      requested('e3', 'rm -rf /x'),
      ev('ExecutionRefused', { execution_id: 'e3', reason: 'retry_cap', detail: 'stop' }),
      ev('TurnStarted', { turn_id: 't2', trigger: 'execution_finished' }),
    ]);
    const told = (messages[1] as { content: string }).content;
    expect(told).toMatch(/sleep 25 on host:strong\) failed \(exit null: lost: the server running it stopped\)/);
    expect(told).toMatch(/touch \/x on host:strong\) was refused: unreachable — no SSH key is configured/);
    expect(told).not.toContain('rm -rf');
  });

  it('does not tell again at the next turn how a run ended when its own answer said so; it does when the answer was pending', () => {
    const run = (n: number, answer: Record<string, unknown> | string, cut: number | null) => [
      ev('ToolCallRequested', { tool_call_id: `c${n}`, message_id: 'a1', name: 'run', args: { target: 'lxc:a', command: `cmd${n}` } }),
      ev('ExecutionRequested', { execution_id: `e${n}`, target: 'lxc:a', command: `cmd${n}`, verdict: { risk_class: 'reversible_low', reason: 'r', rule: 'x', inner_commands: [] }, rules_version: '1', command_hash: `h${n}`, binding: 'b', known_long: false }),
      ev('ExecutionStarted', { execution_id: `e${n}` }),
      ev('ExecutionSucceeded', { execution_id: `e${n}`, exit_code: 0, stdout_tail: `out${n}`, stderr_tail: '', duration_ms: 5 }),
      ev('ToolCallCompleted', { tool_call_id: `c${n}`, result: answer, error: null, result_original_bytes: cut }),
    ];
    const messages = buildModelMessages('S', [
      ev('UserMessagePosted', { message_id: 'u1', text: 'go' }),
      ev('TurnStarted', { turn_id: 't1', trigger: 'user_message' }),
      ...run(1, { execution_id: 'e1', status: 'succeeded', exit_code: 0, stdout: 'out1' }, null),
      // Cut when recorded: the start of its JSON text still says how it ended.
      ...run(2, '{"execution_id":"e2","target":"lxc:a","verdict":{"risk_class":"reversible_low"},"position":7,"status":"succeeded","exit_code":0,"stdout":"ou', 9000),
      // The answer came before the end (the short wait raced it): the end is news.
      ...run(3, { execution_id: 'e3', status: 'pending' }, null),
      ev('TurnEnded', { turn_id: 't1', status: 'completed', model_calls: 4 }),
      ev('UserMessagePosted', { message_id: 'u2', text: 'and?' }),
      ev('TurnStarted', { turn_id: 't2', trigger: 'user_message' }),
    ]);
    const news = messages.filter((m) => m.role === 'user' && m.content.startsWith('[nomos]'));
    expect(news).toEqual([{ role: 'user', content: '[nomos] Meanwhile:\n\nExecution e3 (cmd3 on lxc:a) succeeded.\nout3' }]);
  });

  it('marks a cut result', () => {
    expect(shownResult('x'.repeat(10), null, 9000)).toMatch(/\[cut: the result was 9000 bytes/);
    expect(shownResult({ a: 1 }, null, null)).toBe('{"a":1}');
  });
});
