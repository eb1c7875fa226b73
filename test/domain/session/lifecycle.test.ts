import { describe, expect, it } from 'vitest';
import type { SessionCommandInput } from '../../../src/domain/session/decide.ts';
import { deleted, given, started, taskCompleted } from './given.ts';

// One of each command that needs an existing session.
const commandsOnASession: SessionCommandInput[] = [
  { type: 'post_user_message', text: 'hi' },
  { type: 'record_assistant_message', text: 'hello' },
  { type: 'record_tool_call_requested', tool_call_id: 'tc-1', name: 'run', args: {} },
  { type: 'record_tool_call_completed', tool_call_id: 'tc-1', result: 'ok' },
  { type: 'set_goal', goal: 'fix the backup' },
  { type: 'propose_plan', steps: [{ title: 'look' }] },
  { type: 'update_plan_step', seq: 1, status: 'running' },
  { type: 'complete_task', outcome: 'success', summary: 'done' },
  { type: 'delete_session', reason: null },
];

describe('start_session', () => {
  it('starts a session that does not exist yet, owned by whoever started it', () => {
    expect(given().when({ type: 'start_session', session_id: 's-1' })).toEqual([{ type: 'SessionStarted', data: { session_id: 's-1', owner: { role: 'agent', id: 'nomos' } } }]);
  });

  it.each([
    ['active', [started]],
    ['done', [started, taskCompleted('success')]],
  ])('refuses to start a session that is already %s', (_, events) => {
    const error = given(...events).violates({ type: 'start_session', session_id: 's-1' });
    expect(error.rule).toBe('session_exists');
    expect(error.message).toContain('new id');
  });

  it('refuses to reuse the id of a deleted session', () => {
    const error = given(started, deleted).violates({ type: 'start_session', session_id: 's-1' });
    expect(error.rule).toBe('session_exists');
    expect(error.message).toContain('deleted');
  });
});

describe('a command on a session that does not exist', () => {
  it.each(commandsOnASession.map((command) => [command.type, command] as const))('%s is not found', (_, command) => {
    const error = given().isNotFound(command);
    expect([error.what, error.code]).toEqual(['session', 'session_not_found']);
    expect(error.message).toContain('start the session');
  });
});

describe('a command on a deleted session', () => {
  it.each(commandsOnASession.map((command) => [command.type, command] as const))('%s is not found, and says it was deleted', (_, command) => {
    const error = given(started, deleted).isNotFound(command);
    expect([error.what, error.code]).toEqual(['session', 'session_deleted']);
    expect(error.message).toContain('deleted');
  });
});

describe('delete_session', () => {
  it.each([
    ['active', [started]],
    ['done', [started, taskCompleted('success')]],
    ['failed', [started, taskCompleted('failed')]],
  ])('deletes a session that is %s, keeping the reason', (_, events) => {
    expect(given(...events).when({ type: 'delete_session', reason: 'test session' })).toEqual([
      { type: 'SessionDeleted', data: { reason: 'test session' } },
    ]);
  });
});
