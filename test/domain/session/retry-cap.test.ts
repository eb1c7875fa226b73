// The retry cap: every attempt of the same command on the same final target that did not succeed counts —
// failed, timed out, refused as unreachable (started or not), host key refused, lost — and the third request is
// refused with retry_cap and a hint. Successes, and refusals where nothing was attempted, do not count.
// Given events → when request_execution → then events.
import { describe, expect, it } from 'vitest';
import type { SessionExecutionCommand } from '../../../src/domain/session/commands.ts';
import { RETRY_CAP } from '../../../src/domain/session/decide-execution.ts';
import type { RefusalReason, RiskClass, SessionEvent } from '../../../src/domain/session/events.ts';
import { COMMAND_ID, given, started } from './given.ts';

function request(execution_id: string, risk: RiskClass = 'reversible_low', hash = 'h-cat'): Extract<SessionExecutionCommand, { type: 'request_execution' }> {
  return {
    type: 'request_execution',
    execution_id,
    target: 'host:b',
    command: 'cat /etc/hostname',
    verdict: { risk_class: risk, reason: 'because', rule: `rule-${risk}`, inner_commands: ['cat /etc/hostname'] },
    rules_version: '1',
    command_hash: hash,
    binding: `bind-${execution_id}`,
    known_long: false,
    approval_ttl_ms: 15 * 60_000,
  };
}

const requested = (id: string, hash = 'h-cat'): SessionEvent[] => given(started).when(request(id, 'reversible_low', hash));
const startedEx = (execution_id: string): SessionEvent => ({ type: 'ExecutionStarted', data: { execution_id } });
const failedEx = (execution_id: string, error: string | null = null): SessionEvent => ({
  type: 'ExecutionFailed',
  data: { execution_id, exit_code: error === null ? 1 : null, signal: null, error, stdout_tail: '', stderr_tail: 'no', duration_ms: 5 },
});
const timedOut = (execution_id: string): SessionEvent => ({ type: 'ExecutionTimedOut', data: { execution_id, limit_ms: 1000, stdout_tail: '', stderr_tail: '', duration_ms: 1000 } });
const succeeded = (execution_id: string): SessionEvent => ({ type: 'ExecutionSucceeded', data: { execution_id, exit_code: 0, stdout_tail: 'b', stderr_tail: '', duration_ms: 1 } });
const refused = (execution_id: string, reason: RefusalReason): SessionEvent => ({ type: 'ExecutionRefused', data: { execution_id, reason, detail: reason } });

/** One attempt of the command, ended each way an attempt can end without success. */
const attempts: ReadonlyArray<readonly [string, (id: string) => SessionEvent[]]> = [
  ['failed', (id) => [...requested(id), startedEx(id), failedEx(id)]],
  ['timed out', (id) => [...requested(id), startedEx(id), timedOut(id)]],
  ['started, then refused as unreachable', (id) => [...requested(id), startedEx(id), refused(id, 'unreachable')]],
  ['refused as unreachable before it started', (id) => [...requested(id), refused(id, 'unreachable')]],
  ['host key refused', (id) => [...requested(id), startedEx(id), refused(id, 'host_key_mismatch')]],
  ['lost while running', (id) => [...requested(id), startedEx(id), failedEx(id, 'lost: the server running it stopped before it ended')]],
  [
    'approved, then refused as lost',
    (id) => [
      ...given(started).when(request(id, 'destructive')),
      { type: 'ApprovalGranted', data: { approval_id: COMMAND_ID } },
      refused(id, 'lost'),
    ],
  ],
];

/** The refusal's detail, or '' when the events hold none. */
const refusalDetail = (events: SessionEvent[]): string => events.flatMap((e) => (e.type === 'ExecutionRefused' ? [e.data.detail] : [])).join('');
const capped = (events: SessionEvent[]) => events.map((e) => (e.type === 'ExecutionRefused' ? `${e.type}:${e.data.reason}` : e.type));

describe('the retry cap', () => {
  it('is two attempts that did not succeed', () => {
    expect(RETRY_CAP).toBe(2);
  });

  it.each(attempts)('counts an attempt that %s: the second request runs, the third is refused with retry_cap', (_name, attempt) => {
    expect(capped(given(started, ...attempt('e1')).when(request('e2')))).toEqual(['ExecutionRequested']);
    const third = given(started, ...attempt('e1'), ...attempt('e2')).when(request('e3'));
    expect(capped(third)).toEqual(['ExecutionRequested', 'ExecutionRefused:retry_cap']);
    expect(third[1]!.data).toMatchObject({ execution_id: 'e3' });
    expect(JSON.stringify(third[1]!.data)).toMatch(/ask the operator/);
  });

  it('counts different kinds of attempt together, names them in the refusal and says how to inspect instead', () => {
    const [, failed] = attempts[0]!;
    const [, unreachable] = attempts[2]!;
    const third = given(started, ...failed('e1'), ...unreachable('e2')).when(request('e3'));
    expect(capped(third)).toEqual(['ExecutionRequested', 'ExecutionRefused:retry_cap']);
    const detail = refusalDetail(third);
    expect(detail).toContain('did not succeed 2 times');
    expect(detail).toContain('1 failed, 1 unreachable');
    expect(detail).toMatch(/ps, strace -f -p PID, lsof/);
    expect(detail).toMatch(/ask the operator/);
  });

  it('says a target that could not be reached is to be checked, not inspected with ps', () => {
    const [, unreachable] = attempts[3]!;
    const [, hostKey] = attempts[4]!;
    const third = given(started, ...unreachable('e1'), ...hostKey('e2')).when(request('e3'));
    const detail = refusalDetail(third);
    expect(detail).toContain('1 unreachable, 1 host key refused');
    expect(detail).toMatch(/could not be reached: check its address, SSH port and host key, or ask the operator/);
  });

  it('does not count a success: two successes and a failure leave one attempt to go', () => {
    const history = [started, ...requested('e1'), startedEx('e1'), succeeded('e1'), ...requested('e2'), startedEx('e2'), succeeded('e2'), ...requested('e3'), startedEx('e3'), failedEx('e3')];
    expect(capped(given(...history).when(request('e4')))).toEqual(['ExecutionRequested']);
    expect(capped(given(...history, ...requested('e4'), startedEx('e4'), failedEx('e4')).when(request('e5')))).toEqual(['ExecutionRequested', 'ExecutionRefused:retry_cap']);
  });

  it('does not count refusals where nothing was attempted: the cap itself, already running, a binding mismatch', () => {
    const history = [
      started,
      ...requested('e1'), startedEx('e1'), failedEx('e1'),
      ...requested('e2'), refused('e2', 'binding_mismatch'),
      ...requested('e3'), refused('e3', 'already_running'),
      ...requested('e4'), refused('e4', 'retry_cap'),
    ];
    expect(capped(given(...history).when(request('e5')))).toEqual(['ExecutionRequested']);
  });

  it('does not count approvals denied or expired: nothing was attempted', () => {
    const queued = (id: string) => given(started).when(request(id, 'destructive'));
    const history = [
      started,
      ...queued('e1'), { type: 'ApprovalDenied', data: { approval_id: COMMAND_ID, reason: 'no' } } satisfies SessionEvent,
      ...requested('e2'), startedEx('e2'), failedEx('e2'),
    ];
    expect(capped(given(...history).when(request('e3')))).toEqual(['ExecutionRequested']);
  });

  it('counts per command on its final target: another hash is not capped', () => {
    const [, failed] = attempts[0]!;
    expect(capped(given(started, ...failed('e1'), ...failed('e2')).when(request('e3', 'reversible_low', 'h-other')))).toEqual(['ExecutionRequested']);
  });

  it('counts an attempt once, even if another end were recorded for it', () => {
    const history = [started, ...requested('e1'), startedEx('e1'), refused('e1', 'unreachable'), failedEx('e1')];
    expect(capped(given(...history).when(request('e2')))).toEqual(['ExecutionRequested']);
  });
});
