import { describe, expect, it } from 'vitest';
import { MAX_TOOL_RESULT_BYTES, type SessionEvent } from '../../../src/domain/session/events.ts';
import { COMMAND_ID, given, started, taskCompleted, toolCompleted, toolRequested, userMessage } from './given.ts';

const request = (tool_call_id: string) => ({ type: 'record_tool_call_requested', tool_call_id, name: 'run', args: { command: 'uptime' } }) as const;
const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

describe('record_tool_call_requested', () => {
  it('creates the turn’s assistant message with the first tool call', () => {
    expect(given(started, userMessage('u-1')).when(request('tc-1'))).toEqual([
      { type: 'ToolCallRequested', data: { tool_call_id: 'tc-1', message_id: COMMAND_ID, name: 'run', args: { command: 'uptime' } } },
    ]);
  });

  it('puts every tool call of a turn on the same assistant message', () => {
    const [event] = given(started, userMessage('u-1'), toolRequested('tc-1', 'a-1'), toolCompleted('tc-1')).when(request('tc-2'));
    expect(event).toMatchObject({ type: 'ToolCallRequested', data: { tool_call_id: 'tc-2', message_id: 'a-1' } });
  });

  it('starts a new assistant message after a new user message', () => {
    const [event] = given(started, userMessage('u-1'), toolRequested('tc-1', 'a-1'), userMessage('u-2')).when(request('tc-2'));
    expect(event).toMatchObject({ type: 'ToolCallRequested', data: { message_id: COMMAND_ID } });
  });

  it('refuses an id already used in this session, even in an earlier turn', () => {
    const error = given(started, userMessage('u-1'), toolRequested('tc-1', 'a-1'), toolCompleted('tc-1'), userMessage('u-2')).violates(request('tc-1'));
    expect(error.rule).toBe('duplicate_tool_call');
    expect(error.message).toContain('tc-1');
  });

  it.each(['__proto__', 'constructor', 'toString'])('treats %s as an ordinary, unused id', (id) => {
    expect(given(started).when(request(id))).toHaveLength(1);
  });

  it('does not reopen a completed session', () => {
    expect(given(started, taskCompleted('success')).when(request('tc-1')).map((e) => e.type)).toEqual(['ToolCallRequested']);
  });
});

describe('record_tool_call_completed', () => {
  const withRequest = given(started, userMessage('u-1'), toolRequested('tc-1', 'a-1'));
  const complete = (extra: { result?: unknown; error?: string }) => withRequest.when({ type: 'record_tool_call_completed', tool_call_id: 'tc-1', ...extra });
  const completedData = (events: SessionEvent[]) => {
    const [event] = events;
    if (event?.type !== 'ToolCallCompleted') throw new Error(`expected ToolCallCompleted, got ${JSON.stringify(events)}`);
    return event.data;
  };

  it('keeps a small result as given, with no error', () => {
    expect(complete({ result: { uptime: '3 days', load: [0.1, 0.2] } })).toEqual([
      { type: 'ToolCallCompleted', data: { tool_call_id: 'tc-1', result: { uptime: '3 days', load: [0.1, 0.2] }, error: null, result_original_bytes: null } },
    ]);
  });

  it('records an error, and a missing result as null', () => {
    expect(completedData(complete({ error: 'exit 1' }))).toEqual({ tool_call_id: 'tc-1', result: null, error: 'exit 1', result_original_bytes: null });
  });

  it('keeps a result whose JSON is exactly the limit', () => {
    const result = 'a'.repeat(MAX_TOOL_RESULT_BYTES - 2); // plus the two quotes of its JSON
    expect(completedData(complete({ result }))).toMatchObject({ result, result_original_bytes: null });
  });

  it('cuts a larger result to the limit as JSON text and records the original size', () => {
    const result = { stdout: 'x'.repeat(10_000) };
    const json = JSON.stringify(result);
    const data = completedData(complete({ result }));
    expect(data.result).toBe(json.slice(0, MAX_TOOL_RESULT_BYTES));
    expect(data.result_original_bytes).toBe(json.length);
  });

  it.each([
    ['é (2 bytes)', 'é', MAX_TOOL_RESULT_BYTES - 1],
    ['🚀 (4 bytes)', '🚀', MAX_TOOL_RESULT_BYTES - 3],
  ])('never splits a multi-byte character at the cut: %s', (_, char, expectedBytes) => {
    // JSON is a quote followed by the characters, so the limit falls inside a character.
    const result = char.repeat(3000);
    const data = completedData(complete({ result }));
    expect(typeof data.result).toBe('string');
    const cut = data.result as string;
    expect(utf8Bytes(cut)).toBe(expectedBytes);
    expect(JSON.stringify(result).startsWith(cut)).toBe(true);
    expect(cut).not.toContain('\uFFFD');
    expect(data.result_original_bytes).toBe(utf8Bytes(JSON.stringify(result)));
  });

  it('refuses a result for a tool call that was never requested', () => {
    const error = given(started).violates({ type: 'record_tool_call_completed', tool_call_id: 'tc-9', result: 'ok' });
    expect(error.rule).toBe('unknown_tool_call');
    expect(error.message).toContain('tc-9');
  });

  it('refuses a second result for the same tool call', () => {
    const error = given(started, toolRequested('tc-1', 'a-1'), toolCompleted('tc-1')).violates({
      type: 'record_tool_call_completed',
      tool_call_id: 'tc-1',
      result: 'again',
    });
    expect(error.rule).toBe('tool_call_already_completed');
    expect(error.message).toContain('new tool call');
  });

  it('does not reopen a completed session', () => {
    const events = given(started, toolRequested('tc-1', 'a-1'), taskCompleted('success')).when({ type: 'record_tool_call_completed', tool_call_id: 'tc-1' });
    expect(events.map((e) => e.type)).toEqual(['ToolCallCompleted']);
  });
});
