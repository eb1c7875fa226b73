// Running commands: what runs at once, what waits for an approval, the assent window, and approvals bound to
// exactly what will run (the retry cap is retry-cap.test.ts) — given events → when command → then events (or the rule).
import { describe, expect, it } from 'vitest';
import type { SessionExecutionCommand } from '../../../src/domain/session/commands.ts';
import type { RiskClass, SessionEvent } from '../../../src/domain/session/events.ts';
import { COMMAND_ID, given, meta, started, taskCompleted } from './given.ts';

const TTL = 15 * 60_000;

function request(execution_id: string, risk: RiskClass, hash = 'h-chown', command = 'chown :10000 /mnt/media'): Extract<SessionExecutionCommand, { type: 'request_execution' }> {
  return {
    type: 'request_execution',
    execution_id,
    target: 'host:strong',
    command,
    verdict: { risk_class: risk, reason: 'because', rule: `rule-${risk}`, inner_commands: [command] },
    rules_version: '1',
    command_hash: hash,
    binding: `bind-${execution_id}`,
    known_long: false,
    approval_ttl_ms: TTL,
  };
}

/** The events a request decides, as history for the next step. */
function requested(execution_id: string, risk: RiskClass, hash = 'h-chown'): SessionEvent[] {
  return given(started).when(request(execution_id, risk, hash));
}

const startedEx = (execution_id: string): SessionEvent => ({ type: 'ExecutionStarted', data: { execution_id } });

describe('request_execution', () => {
  it('lets a read-only command run at once', () => {
    const events = given(started).when(request('e1', 'reversible_low'));
    expect(events.map((e) => e.type)).toEqual(['ExecutionRequested']);
    expect(events[0]!.data).toMatchObject({ execution_id: 'e1', target: 'host:strong', verdict: { risk_class: 'reversible_low' } });
  });

  it('queues a config_mutation with an approval bound to what will run, expiring after the TTL', () => {
    const events = given(started).when(request('e1', 'config_mutation'));
    expect(events.map((e) => e.type)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    expect(events[1]!.data).toEqual({
      approval_id: COMMAND_ID,
      execution_id: 'e1',
      command: 'chown :10000 /mnt/media',
      target: 'host:strong',
      risk_class: 'config_mutation',
      binding: 'bind-e1',
      expires_at: new Date(Date.parse(meta.now) + TTL).toISOString(),
    });
  });

  it('runs a config_mutation at once inside an open assent window, but never a destructive one', () => {
    const assent: SessionEvent = { type: 'AssentOpened', data: { until: '2026-07-20T10:30:00.000Z', minutes: 30 } };
    expect(given(started, assent).when(request('e1', 'config_mutation')).map((e) => e.type)).toEqual(['ExecutionRequested']);
    expect(given(started, assent).when(request('e1', 'destructive')).map((e) => e.type)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
  });

  it('asks again once the assent window has lapsed or was closed', () => {
    const lapsed: SessionEvent = { type: 'AssentOpened', data: { until: '2026-07-20T09:59:59.000Z', minutes: 5 } };
    expect(given(started, lapsed).when(request('e1', 'config_mutation')).map((e) => e.type)).toContain('ApprovalRequested');
    const open: SessionEvent = { type: 'AssentOpened', data: { until: '2026-07-20T10:30:00.000Z', minutes: 30 } };
    const closed: SessionEvent = { type: 'AssentClosed', data: { reason: 'task completed' } };
    expect(given(started, open, closed).when(request('e1', 'config_mutation')).map((e) => e.type)).toContain('ApprovalRequested');
  });

  it('refuses to start a command again while the same one is still running (it may be hung)', () => {
    const events = given(started, ...requested('e1', 'reversible_low'), startedEx('e1')).when(request('e2', 'reversible_low'));
    expect(events[1]).toMatchObject({ type: 'ExecutionRefused', data: { reason: 'already_running' } });
    expect(JSON.stringify(events[1]!.data)).toMatch(/get_execution_status/);
  });

  it('refuses on a closed session and a duplicate execution id', () => {
    expect(given(started, taskCompleted('success')).violates(request('e1', 'reversible_low')).rule).toBe('session_closed');
    expect(given(started, ...requested('e1', 'reversible_low')).violates(request('e1', 'reversible_low')).rule).toBe('duplicate_execution');
  });
});

describe('approvals', () => {
  const queued = () => [started, ...requested('e1', 'destructive')];
  const approvalId = COMMAND_ID;

  it('grants a pending approval once; a second decision is refused', () => {
    const granted = given(...queued()).when({ type: 'approve', approval_id: approvalId });
    expect(granted).toEqual([{ type: 'ApprovalGranted', data: { approval_id: approvalId } }]);
    expect(given(...queued(), ...granted).violates({ type: 'approve', approval_id: approvalId }).rule).toBe('approval_decided');
    expect(given(...queued(), ...granted).violates({ type: 'deny', approval_id: approvalId, reason: 'late' }).rule).toBe('approval_decided');
  });

  it('denies with a reason, and an unknown approval is not found', () => {
    expect(given(...queued()).when({ type: 'deny', approval_id: approvalId, reason: 'not on a Friday' })).toEqual([
      { type: 'ApprovalDenied', data: { approval_id: approvalId, reason: 'not on a Friday' } },
    ]);
    expect(given(...queued()).isNotFound({ type: 'approve', approval_id: 'nope' }).code).toBe('approval_not_found');
  });

  it('expires an approval past its TTL, and approving it then expires it instead of running', () => {
    const late = queued().map((e) => (e.type === 'ApprovalRequested' ? { ...e, data: { ...e.data, expires_at: '2026-07-20T09:00:00.000Z' } } : e));
    expect(given(...late).when({ type: 'expire_approval', approval_id: approvalId })).toEqual([{ type: 'ApprovalExpired', data: { approval_id: approvalId } }]);
    expect(given(...late).when({ type: 'approve', approval_id: approvalId })).toEqual([{ type: 'ApprovalExpired', data: { approval_id: approvalId } }]);
    // Not yet due, or already decided: the sweep leaves it alone.
    expect(given(...queued()).when({ type: 'expire_approval', approval_id: approvalId })).toEqual([]);
  });

  it('cancels pending approvals as orphaned and closes the assent window when the task completes', () => {
    const assent: SessionEvent = { type: 'AssentOpened', data: { until: '2026-07-20T10:30:00.000Z', minutes: 30 } };
    const events = given(...queued(), assent).when({ type: 'complete_task', outcome: 'partial', summary: 'waiting' });
    expect(events.map((e) => e.type)).toEqual(['ApprovalCancelled', 'AssentClosed', 'TaskCompleted']);
  });
});

describe('start and finish', () => {
  it('starts a runnable or approved execution exactly once, only with the binding it was requested with', () => {
    const runnable = [started, ...requested('e1', 'reversible_low')];
    expect(given(...runnable).when({ type: 'start_execution', execution_id: 'e1', binding: 'bind-e1' })).toEqual([startedEx('e1')]);
    expect(given(...runnable, startedEx('e1')).violates({ type: 'start_execution', execution_id: 'e1', binding: 'bind-e1' }).rule).toBe('not_runnable');
    const mismatch = given(...runnable).when({ type: 'start_execution', execution_id: 'e1', binding: 'something else' });
    expect(mismatch[0]).toMatchObject({ type: 'ExecutionRefused', data: { reason: 'binding_mismatch' } });
  });

  it('does not start an execution that waits for, or was refused, its approval', () => {
    const queued = [started, ...requested('e1', 'destructive')];
    expect(given(...queued).violates({ type: 'start_execution', execution_id: 'e1', binding: 'bind-e1' }).rule).toBe('not_runnable');
    const denied: SessionEvent = { type: 'ApprovalDenied', data: { approval_id: COMMAND_ID, reason: 'no' } };
    expect(given(...queued, denied).violates({ type: 'start_execution', execution_id: 'e1', binding: 'bind-e1' }).rule).toBe('not_runnable');
    const granted: SessionEvent = { type: 'ApprovalGranted', data: { approval_id: COMMAND_ID } };
    expect(given(...queued, granted).when({ type: 'start_execution', execution_id: 'e1', binding: 'bind-e1' })).toEqual([startedEx('e1')]);
  });

  it('records each outcome once, only for a running execution', () => {
    const running = [started, ...requested('e1', 'reversible_low'), startedEx('e1')];
    const timed = given(...running).when({ type: 'finish_execution', execution_id: 'e1', outcome: { kind: 'timed_out', limit_ms: 1000, stdout_tail: 'a', stderr_tail: '', duration_ms: 1001 } });
    expect(timed[0]).toMatchObject({ type: 'ExecutionTimedOut', data: { limit_ms: 1000 } });
    expect(given(...running, ...timed).violates({ type: 'finish_execution', execution_id: 'e1', outcome: { kind: 'succeeded', stdout_tail: '', stderr_tail: '', duration_ms: 1 } }).rule).toBe('not_running');
  });
});

describe('open_assent', () => {
  it('opens a window of the given minutes, within bounds', () => {
    expect(given(started).when({ type: 'open_assent', minutes: 30 })).toEqual([
      { type: 'AssentOpened', data: { until: '2026-07-20T10:30:00.000Z', minutes: 30, for: { role: 'agent', id: 'nomos' } } },
    ]);
    expect(given(started).violates({ type: 'open_assent', minutes: 0 }).rule).toBe('assent_minutes');
    expect(given(started).violates({ type: 'open_assent', minutes: 10_000 }).rule).toBe('assent_minutes');
  });
});

describe('turns', () => {
  const turnStarted: SessionEvent = { type: 'TurnStarted', data: { turn_id: 't1', trigger: 'user_message' } };

  it('runs one turn at a time, and ends it once', () => {
    expect(given(started).when({ type: 'start_turn', turn_id: 't1', trigger: 'user_message' })).toEqual([turnStarted]);
    expect(given(started, turnStarted).violates({ type: 'start_turn', turn_id: 't2', trigger: 'continue' }).rule).toBe('turn_running');
    const ended = given(started, turnStarted).when({ type: 'end_turn', turn_id: 't1', status: 'completed', model_calls: 2 });
    expect(ended).toEqual([{ type: 'TurnEnded', data: { turn_id: 't1', status: 'completed', model_calls: 2 } }]);
    expect(given(started, turnStarted, ...ended).violates({ type: 'end_turn', turn_id: 't1', status: 'completed', model_calls: 2 }).rule).toBe('turn_not_running');
    expect(given(started, turnStarted, ...ended).when({ type: 'start_turn', turn_id: 't2', trigger: 'continue' })).toHaveLength(1);
  });

  it('asks a running turn to stop once, and refuses a cancel when nothing runs', () => {
    const cancel = given(started, turnStarted).when({ type: 'cancel_turn' });
    expect(cancel).toEqual([{ type: 'TurnCancelRequested', data: { turn_id: 't1' } }]);
    expect(given(started, turnStarted, ...cancel).when({ type: 'cancel_turn' })).toEqual([]);
    expect(given(started).violates({ type: 'cancel_turn' }).rule).toBe('no_turn_running');
  });
});
