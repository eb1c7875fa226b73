// When the agent carries on by itself: an execution it asked for ended after its last turn looked, in a session
// still open — derived from the events, so every server answers alike.
import { describe, expect, it } from 'vitest';
import { type StoredEventLike, unseenExecutionEnd } from '../../src/domain/session/continuation.ts';

const agent = { actor: { role: 'agent', id: 'nomos' } };
const operator = { actor: { role: 'operator', id: 'ops' } };
/** An external agent over MCP: an agent's token, through a client it named. */
const external = { actor: { role: 'agent', id: 'claude-box' }, client: { name: 'claude-code', version: '2.1.7' } };

function log(...specs: Array<[string, Record<string, unknown>, Record<string, unknown>?]>): StoredEventLike[] {
  return specs.map(([type, data, metadata], streamPosition) => ({ type, data, metadata: metadata ?? agent, streamPosition }));
}

const requested = (by: Record<string, unknown> = agent): [string, Record<string, unknown>, Record<string, unknown>] => ['ExecutionRequested', { execution_id: 'e1' }, by];
const turn = (id: string): [string, Record<string, unknown>] => ['TurnStarted', { turn_id: id, trigger: 'user_message' }];
const ended = (id: string, status: string, seen?: number): [string, Record<string, unknown>] => ['TurnEnded', { turn_id: id, status, model_calls: 1, ...(seen !== undefined && { seen_version: seen }) }];

describe('unseenExecutionEnd', () => {
  it.each([
    ['an end after the completed turn that asked for it', log(turn('t1'), requested(), ended('t1', 'completed', 1), ['ExecutionSucceeded', { execution_id: 'e1' }]), 'e1'],
    ['a failure (lost) after it', log(turn('t1'), requested(), ended('t1', 'completed', 1), ['ExecutionFailed', { execution_id: 'e1', error: 'lost' }]), 'e1'],
    ['a refusal once approved', log(turn('t1'), requested(), ended('t1', 'completed', 1), ['ApprovalGranted', {}], ['ExecutionRefused', { execution_id: 'e1' }]), 'e1'],
    ['an end during the turn, after its last model call looked', log(turn('t1'), requested(), ['ExecutionTimedOut', { execution_id: 'e1' }], ended('t1', 'completed', 1)), 'e1'],
    ['an end the last model call saw', log(turn('t1'), requested(), ['ExecutionSucceeded', { execution_id: 'e1' }], ended('t1', 'completed', 2)), null],
    ['an end a later turn started after', log(turn('t1'), requested(), ended('t1', 'completed', 1), ['ExecutionSucceeded', { execution_id: 'e1' }], turn('t2')), null],
    ['an end followed by a cancelled turn', log(turn('t1'), requested(), ['ExecutionSucceeded', { execution_id: 'e1' }], ended('t1', 'cancelled', 1)), null],
    ['an end after a cancelled turn: only the operator starts the agent again', log(turn('t1'), requested(), ended('t1', 'cancelled', 1), ['ExecutionSucceeded', { execution_id: 'e1' }]), null],
    ['an end after a cancelled turn and a new one that completed', log(turn('t1'), requested(), ended('t1', 'cancelled', 1), turn('t2'), ended('t2', 'completed', 3), ['ExecutionSucceeded', { execution_id: 'e1' }]), 'e1'],
    ['a turn recorded before seen_version existed', log(turn('t1'), requested(), ['ExecutionSucceeded', { execution_id: 'e1' }], ended('t1', 'completed')), null],
    ['the built-in agent\'s, read as projected (a metadata key it lacks reads null)', log(turn('t1'), requested({ ...agent, client: null }), ended('t1', 'completed', 1), ['ExecutionSucceeded', { execution_id: 'e1' }]), 'e1'],
    ['an execution the operator asked for', log(requested(operator), ['ExecutionSucceeded', { execution_id: 'e1' }]), null],
    ['an execution an external agent asked for (over MCP): it polls, the built-in agent stays out', log(requested(external), ['ExecutionSucceeded', { execution_id: 'e1' }]), null],
    ['an external agent denied: it is told by get_execution_status', log(requested(external), ['ApprovalRequested', { approval_id: 'a1', execution_id: 'e1' }], ['ApprovalDenied', { approval_id: 'a1', reason: 'no' }]), null],
    ['a session completed meanwhile', log(turn('t1'), requested(), ended('t1', 'completed', 1), ['TaskCompleted', {}], ['ExecutionSucceeded', { execution_id: 'e1' }]), null],
    ['a session reopened after completion', log(turn('t1'), requested(), ended('t1', 'completed', 1), ['TaskCompleted', {}], ['SessionReopened', {}], ['ExecutionSucceeded', { execution_id: 'e1' }]), 'e1'],
    ['nothing ended', log(turn('t1'), requested(), ended('t1', 'completed', 1)), null],
    ['an approval the operator denied', log(turn('t1'), requested(), ['ApprovalRequested', { approval_id: 'a1', execution_id: 'e1' }], ended('t1', 'completed', 2), ['ApprovalDenied', { approval_id: 'a1', reason: 'not now' }]), 'e1'],
    ['a denial the last model call saw', log(turn('t1'), requested(), ['ApprovalRequested', { approval_id: 'a1', execution_id: 'e1' }], ['ApprovalDenied', { approval_id: 'a1', reason: 'no' }], ended('t1', 'completed', 3)), null],
  ])('%s', (_name, events, expected) => {
    expect(unseenExecutionEnd(events)).toBe(expected);
  });
});
