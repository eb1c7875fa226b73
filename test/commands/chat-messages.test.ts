// The chat client's view of a session: which stored events become which messages, with exactly the fields the
// client reads and the event's global position as id; everything else is not shown.
import { describe, expect, it } from 'vitest';
import { toChatMessage } from '../../src/agent/chat-messages.ts';
import type { StoredEvent } from '../../src/ports/event-store.ts';

const SESSION = '0b7c6a1e-3f0e-4d8e-9a51-2f7f3c1f2a10';

function stored(type: string, data: Record<string, unknown>, position = 42): StoredEvent {
  return {
    type,
    data,
    metadata: {},
    eventId: `event-${position}`,
    streamName: `session-${SESSION}`,
    streamPosition: 3,
    position,
    checkpoint: { tx: 9, pos: position },
    recordedAt: '2026-07-18T09:45:00.000Z',
  };
}

describe('toChatMessage', () => {
  it('turns a requested tool call into tool_use, without the message id it belongs to', () => {
    const event = stored('ToolCallRequested', { tool_call_id: 'tc1', message_id: 'm1', name: 'run', args: { target: 'lxc:rclone', command: 'uptime' } }, 17);
    expect(toChatMessage(SESSION, event)).toEqual({
      id: 17,
      type: 'tool_use',
      session_id: SESSION,
      data: { tool_call_id: 'tc1', name: 'run', args: { target: 'lxc:rclone', command: 'uptime' } },
    });
  });

  it('turns a completed tool call into tool_result, with its error and the size of a cut result', () => {
    const ok = stored('ToolCallCompleted', { tool_call_id: 'tc1', result: { exit_code: 0 }, error: null, result_original_bytes: null });
    expect(toChatMessage(SESSION, ok)).toEqual({
      id: 42,
      type: 'tool_result',
      session_id: SESSION,
      data: { tool_call_id: 'tc1', result: { exit_code: 0 }, error: null, result_original_bytes: null },
    });
    const cut = stored('ToolCallCompleted', { tool_call_id: 'tc2', result: 'x'.repeat(10), error: 'boom', result_original_bytes: 90_000 });
    expect(toChatMessage(SESSION, cut)?.data).toEqual({ tool_call_id: 'tc2', result: 'x'.repeat(10), error: 'boom', result_original_bytes: 90_000 });
  });

  it('turns a requested approval into approval_required, without the binding hash', () => {
    const event = stored('ApprovalRequested', {
      approval_id: 'a1',
      execution_id: 'x1',
      command: 'systemctl restart nginx',
      target: 'host:strong',
      risk_class: 'config_mutation',
      binding: 'sha256:abc',
      expires_at: '2026-07-18T10:00:00.000Z',
    });
    expect(toChatMessage(SESSION, event)).toEqual({
      id: 42,
      type: 'approval_required',
      session_id: SESSION,
      data: { approval_id: 'a1', execution_id: 'x1', command: 'systemctl restart nginx', target: 'host:strong', risk_class: 'config_mutation', expires_at: '2026-07-18T10:00:00.000Z' },
    });
  });

  it('turns the assistant message into text, a failed turn into error and an ended turn into done', () => {
    expect(toChatMessage(SESSION, stored('AssistantMessageRecorded', { message_id: 'm1', text: 'All good.' }))).toMatchObject({ type: 'text', data: { message_id: 'm1', text: 'All good.' } });
    expect(toChatMessage(SESSION, stored('TurnFailed', { reason: 'iteration_limit', detail: 'stopped after 20 model calls' }))).toMatchObject({
      type: 'error',
      data: { reason: 'iteration_limit', detail: 'stopped after 20 model calls' },
    });
    expect(toChatMessage(SESSION, stored('TurnEnded', { turn_id: 't1', status: 'completed', model_calls: 4 }))).toEqual({
      id: 42,
      type: 'done',
      session_id: SESSION,
      data: { turn_id: 't1', status: 'completed' },
    });
  });

  it('sends a user message, so a client following the session sees what another client asked', () => {
    expect(toChatMessage(SESSION, stored('UserMessagePosted', { message_id: 'm0', text: 'hi' }))).toEqual({ id: 42, type: 'user_message', session_id: SESSION, data: { message_id: 'm0', text: 'hi' } });
  });

  it('shows nothing for the other events, nor for a type this build does not know', () => {
    expect(toChatMessage(SESSION, stored('SessionStarted', { session_id: SESSION }))).toBeNull();
    expect(toChatMessage(SESSION, stored('TurnStarted', { turn_id: 't1', trigger: 'user_message' }))).toBeNull();
    expect(toChatMessage(SESSION, stored('ApprovalGranted', { approval_id: 'a1' }))).toBeNull();
    expect(toChatMessage(SESSION, stored('SomethingFromTheFuture', { whatever: true }))).toBeNull();
  });

  it('refuses a stored event that does not match its schema rather than sending garbage', () => {
    expect(() => toChatMessage(SESSION, stored('TurnEnded', { turn_id: 't1', status: 'exploded', model_calls: 1 }))).toThrow();
  });
});
