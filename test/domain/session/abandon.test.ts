// When Nomos may close a task nobody finished: only an active session with nothing in flight; the summary it
// records says why, in words; and only its own system actor counts as "closed by Nomos".
import { describe, expect, it } from 'vitest';
import { ABANDONED_BY, abandonSummary, closedByNomos, describeDuration, keptOpenBy } from '../../../src/domain/session/abandon.ts';
import type { SessionEvent } from '../../../src/domain/session/events.ts';
import { approvalRequested, fold, goalSet, started, taskCompleted } from './given.ts';

const requested = (execution_id: string): SessionEvent => ({
  type: 'ExecutionRequested',
  data: {
    execution_id,
    target: 'host:pve',
    command: 'chown backup /srv',
    verdict: { risk_class: 'config_mutation', reason: 'chown', rule: 'chown', inner_commands: [] },
    rules_version: '1',
    command_hash: 'h',
    binding: 'b',
    known_long: false,
  },
});

describe('keptOpenBy', () => {
  it('lets an active session with nothing in flight be closed', () => {
    expect(keptOpenBy(fold(started, goalSet('g-1')))).toBeNull();
  });

  it('keeps a closed, deleted or never started session as it is', () => {
    expect(keptOpenBy(fold(started, taskCompleted('success')))).toBe('the session is done');
    expect(keptOpenBy(fold(started, { type: 'SessionDeleted', data: { reason: null } }))).toBe('the session is deleted');
    expect(keptOpenBy(fold())).toBe('the session is none');
  });

  it('leaves a running turn, a pending approval and an execution on its way to end first', () => {
    expect(keptOpenBy(fold(started, { type: 'TurnStarted', data: { turn_id: 't-1', trigger: 'user_message' } }))).toBe('a turn is running');
    expect(keptOpenBy(fold(started, requested('exec-ap-1'), approvalRequested('ap-1')))).toBe('an approval is pending');
    expect(keptOpenBy(fold(started, requested('e-1'), { type: 'ExecutionStarted', data: { execution_id: 'e-1' } }))).toBe('an execution has not ended');
    const ended: SessionEvent = { type: 'ExecutionFailed', data: { execution_id: 'e-1', exit_code: 1, signal: null, error: null, stdout_tail: '', stderr_tail: '' } as never };
    expect(keptOpenBy(fold(started, requested('e-1'), { type: 'ExecutionStarted', data: { execution_id: 'e-1' } }, ended))).toBeNull();
    const denied: SessionEvent = { type: 'ApprovalDenied', data: { approval_id: 'ap-1', reason: 'no' } };
    expect(keptOpenBy(fold(started, requested('exec-ap-1'), approvalRequested('ap-1'), denied))).toBeNull();
  });
});

describe('the summary and who closed it', () => {
  it('says how long the session sat idle, or that the MCP session ended', () => {
    expect(abandonSummary('idle', 24 * 3600_000)).toBe('No activity for 24 h: the task was left unfinished.');
    expect(abandonSummary('idle', 90 * 60_000)).toBe('No activity for 1 h 30 min: the task was left unfinished.');
    expect(abandonSummary('mcp_session_ended', 0)).toMatch(/MCP client .* ended its MCP session before completing the task/);
    expect(describeDuration(1500)).toBe('2 s');
  });

  it("counts only Nomos's own system actor as closing it, not the agent's loop nor a person", () => {
    expect(ABANDONED_BY).toEqual({ role: 'system', id: 'executor' });
    expect(closedByNomos('system:executor')).toBe(true);
    expect(closedByNomos('system:agent')).toBe(false);
    expect(closedByNomos('operator:alice')).toBe(false);
    expect(closedByNomos(null)).toBe(false);
  });
});
