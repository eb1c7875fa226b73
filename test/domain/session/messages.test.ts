import { describe, expect, it } from 'vitest';
import { assistantMessage, COMMAND_ID, given, started, taskCompleted, toolRequested, userMessage } from './given.ts';

describe('post_user_message', () => {
  it('posts the message under the id of the command', () => {
    expect(given(started).when({ type: 'post_user_message', text: 'is the backup running?' })).toEqual([
      { type: 'UserMessagePosted', data: { message_id: COMMAND_ID, text: 'is the backup running?' } },
    ]);
  });

  it.each(['success', 'failed'] as const)('reopens a session whose task ended with %s before posting', (outcome) => {
    const previous_status = outcome === 'failed' ? 'failed' : 'done';
    expect(given(started, taskCompleted(outcome)).when({ type: 'post_user_message', text: 'one more thing' })).toEqual([
      { type: 'SessionReopened', data: { previous_status } },
      { type: 'UserMessagePosted', data: { message_id: COMMAND_ID, text: 'one more thing' } },
    ]);
  });
});

describe('record_assistant_message', () => {
  it('creates the turn’s assistant message when no tool call did', () => {
    expect(given(started, userMessage('u-1')).when({ type: 'record_assistant_message', text: 'All good.' })).toEqual([
      { type: 'AssistantMessageRecorded', data: { message_id: COMMAND_ID, text: 'All good.' } },
    ]);
  });

  it('completes the assistant message the turn’s tool calls created', () => {
    expect(given(started, userMessage('u-1'), toolRequested('tc-1', 'a-1')).when({ type: 'record_assistant_message', text: 'Fixed.' })).toEqual([
      { type: 'AssistantMessageRecorded', data: { message_id: 'a-1', text: 'Fixed.' } },
    ]);
  });

  it('starts a new assistant message after a new user message', () => {
    const events = given(started, userMessage('u-1'), toolRequested('tc-1', 'a-1'), assistantMessage('a-1'), userMessage('u-2')).when({
      type: 'record_assistant_message',
      text: 'Second answer.',
    });
    expect(events).toEqual([{ type: 'AssistantMessageRecorded', data: { message_id: COMMAND_ID, text: 'Second answer.' } }]);
  });

  it('does not reopen a session the agent just completed', () => {
    expect(given(started, userMessage('u-1'), taskCompleted('success')).when({ type: 'record_assistant_message', text: 'Done — summary below.' })).toEqual([
      { type: 'AssistantMessageRecorded', data: { message_id: COMMAND_ID, text: 'Done — summary below.' } },
    ]);
  });
});
