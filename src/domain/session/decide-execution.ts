// Rules for running commands in a session: what runs at once, what waits for an approval, the retry cap,
// the assent window, the operator's policy (its decision travels on the verdict), and approvals bound to exactly
// what will run. Classification, the policy's decision and hashing happen before (in the command layer); these
// rules only decide on their results and the session's history.
import { NotFound, RuleViolation, type CommandMetadata, sameActor } from '../messages.ts';
import { actingAs } from './owner.ts';
import type { SessionExecutionCommand } from './commands.ts';
import type { SessionEvent, Verdict } from './events.ts';
import type { Approval, Execution, SessionState, UnsuccessfulAttempt } from './state.ts';

/**
 * Attempts of the same command on the same final target that did not succeed (failed, timed out, unreachable,
 * host key refused, lost) after which run refuses it: the next request after this many is refused.
 */
export const RETRY_CAP = 2;
export const MAX_ASSENT_MINUTES = 240;

type CommandOf<T extends SessionExecutionCommand['type']> = Extract<SessionExecutionCommand, { type: T }>;

export function decideExecution(command: SessionExecutionCommand, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  switch (command.type) {
    case 'request_execution':
      return decideRequest(command, state, meta);
    case 'start_execution': {
      const execution = requireExecution(state, command.execution_id);
      if (execution.status !== 'runnable' && execution.status !== 'approved') {
        throw new RuleViolation('not_runnable', `Execution ${execution.executionId} is ${execution.status}; it cannot start (again).`);
      }
      if (command.binding !== execution.binding) {
        const detail = 'What would run (command, target or classifier rules) differs from what was requested and approved; nothing ran. Request it again.';
        return [{ type: 'ExecutionRefused', data: { execution_id: execution.executionId, reason: 'binding_mismatch', detail } }];
      }
      return [{ type: 'ExecutionStarted', data: { execution_id: execution.executionId } }];
    }
    case 'finish_execution': {
      const execution = requireExecution(state, command.execution_id);
      if (execution.status !== 'running') throw new RuleViolation('not_running', `Execution ${execution.executionId} is ${execution.status}, not running.`);
      const execution_id = execution.executionId;
      const o = command.outcome;
      switch (o.kind) {
        case 'succeeded':
          return [{ type: 'ExecutionSucceeded', data: { execution_id, exit_code: 0, stdout_tail: o.stdout_tail, stderr_tail: o.stderr_tail, duration_ms: o.duration_ms } }];
        case 'failed':
          return [{ type: 'ExecutionFailed', data: { execution_id, exit_code: o.exit_code, signal: o.signal, error: o.error, stdout_tail: o.stdout_tail, stderr_tail: o.stderr_tail, duration_ms: o.duration_ms } }];
        case 'timed_out':
          return [{ type: 'ExecutionTimedOut', data: { execution_id, limit_ms: o.limit_ms, stdout_tail: o.stdout_tail, stderr_tail: o.stderr_tail, duration_ms: o.duration_ms } }];
        default: {
          const unhandled: never = o;
          throw new Error(`finish_execution: unhandled outcome ${JSON.stringify(unhandled)}`);
        }
      }
    }
    case 'refuse_execution': {
      const execution = requireExecution(state, command.execution_id);
      if (!['runnable', 'approved', 'running'].includes(execution.status)) {
        throw new RuleViolation('not_runnable', `Execution ${execution.executionId} is ${execution.status}; there is nothing to refuse.`);
      }
      return [{ type: 'ExecutionRefused', data: { execution_id: execution.executionId, reason: command.reason, detail: command.detail } }];
    }
    case 'approve': {
      const approval = requirePending(state, command.approval_id, 'approve');
      // An approval that outlived its TTL expires now rather than running something nobody still watches.
      if (approval.expiresAt <= meta.now) return [{ type: 'ApprovalExpired', data: { approval_id: approval.approvalId } }];
      return [{ type: 'ApprovalGranted', data: { approval_id: approval.approvalId } }];
    }
    case 'deny': {
      const approval = requirePending(state, command.approval_id, 'deny');
      return [{ type: 'ApprovalDenied', data: { approval_id: approval.approvalId, reason: command.reason } }];
    }
    case 'expire_approval': {
      const approval = state.approvals.get(command.approval_id);
      // Expiry is swept periodically: an approval decided or not yet due is simply left alone.
      if (!approval || approval.status !== 'pending' || approval.expiresAt > meta.now) return [];
      return [{ type: 'ApprovalExpired', data: { approval_id: approval.approvalId } }];
    }
    case 'open_assent': {
      requireOpen(state, 'open an assent window');
      if (!Number.isInteger(command.minutes) || command.minutes < 1 || command.minutes > MAX_ASSENT_MINUTES) {
        throw new RuleViolation('assent_minutes', `An assent window lasts 1 to ${MAX_ASSENT_MINUTES} minutes.`);
      }
      const until = new Date(Date.parse(meta.now) + command.minutes * 60_000).toISOString();
      const grantee = command.for ?? state.owner;
      if (grantee === null) throw new Error('open_assent: a started session has no owner');
      return [{ type: 'AssentOpened', data: { until, minutes: command.minutes, for: grantee } }];
    }
    default: {
      const unhandled: never = command;
      throw new Error(`decideExecution: unhandled command ${JSON.stringify(unhandled)}`);
    }
  }
}

function decideRequest(command: CommandOf<'request_execution'>, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  requireOpen(state, 'run a command');
  if (state.executions.has(command.execution_id)) throw new RuleViolation('duplicate_execution', `Execution ${command.execution_id} already exists.`);
  const { execution_id, target, command: text, verdict, rules_version, command_hash, binding, known_long, shadow } = command;
  const requested: SessionEvent = {
    type: 'ExecutionRequested',
    data: { execution_id, target, command: text, verdict, rules_version, command_hash, binding, known_long, ...(shadow !== undefined && { shadow }) },
  };
  // A rule refuses it: nothing else about it matters, and nobody is asked.
  if (verdict.decision === 'deny') {
    const detail = `The operator's policy refuses this command on ${target} (rule ${verdict.rule_id ?? '?'}, policy version ${verdict.policy_version ?? '?'}); nothing ran. Do not rephrase it to get around the rule: ask the operator.`;
    return [requested, { type: 'ExecutionRefused', data: { execution_id, reason: 'policy_denied', detail } }];
  }

  const running = [...state.executions.values()].find((e) => e.commandHash === command_hash && e.status === 'running');
  if (running) {
    const detail = `Execution ${running.executionId} of the same command on ${target} is still running. Check it with get_execution_status (it may be hung: inspect with ps, strace, lsof) instead of starting it again.`;
    return [requested, { type: 'ExecutionRefused', data: { execution_id, reason: 'already_running', detail } }];
  }
  const failures = state.failuresByHash.get(command_hash) ?? [];
  if (failures.length >= RETRY_CAP) {
    return [requested, { type: 'ExecutionRefused', data: { execution_id, reason: 'retry_cap', detail: retryCapHint(failures, target) } }];
  }
  // Nothing can reach the target (no key, no address): refused now, never put before an operator to approve.
  if (command.unreachable !== undefined) return [requested, { type: 'ExecutionRefused', data: { execution_id, reason: 'unreachable', detail: command.unreachable } }];
  if (runsAtOnce(verdict, state, meta)) return [requested];
  const expires_at = new Date(Date.parse(meta.now) + command.approval_ttl_ms).toISOString();
  const decidedBy = verdict.rule_id === undefined ? {} : { rule_id: verdict.rule_id, policy_version: verdict.policy_version ?? 0 };
  return [
    requested,
    { type: 'ApprovalRequested', data: { approval_id: meta.commandId, execution_id, command: text, target, risk_class: verdict.risk_class, binding, expires_at, ...decidedBy } },
  ];
}

/**
 * Whether a command runs without an approval. The policy's decision when there is one: allow runs, ask asks. An
 * assent window lets a config_mutation through only where the classifier decided (no rule matched, or the floor
 * asked): a rule that says ask is the operator saying "always ask". Without a decision (a request made before the
 * policy was consulted) the verdict alone decides, as it did then.
 */
function runsAtOnce(verdict: Verdict, state: SessionState, meta: CommandMetadata): boolean {
  if (verdict.decision === 'allow') return true;
  if (verdict.decision === undefined && verdict.risk_class === 'reversible_low') return true;
  if (verdict.rule_id !== undefined && verdict.rule_id !== 'classifier' && verdict.rule_id !== 'floor') return false;
  // The window is granted to one actor: a command anyone else sends here still asks.
  const assented = state.assentUntil !== null && state.assentUntil > meta.now && sameActor(state.assentFor, actingAs(state, meta));
  return verdict.risk_class === 'config_mutation' && assented;
}

const ATTEMPT_WORDS: Record<UnsuccessfulAttempt, string> = {
  failed: 'failed',
  timed_out: 'timed out',
  unreachable: 'unreachable',
  host_key_mismatch: 'host key refused',
  lost: 'lost',
};

/** What the refusal says: how the attempts ended, and what to do instead of a next attempt. */
function retryCapHint(failures: readonly UnsuccessfulAttempt[], target: string): string {
  const tally = (Object.keys(ATTEMPT_WORDS) as UnsuccessfulAttempt[])
    .map((kind) => [kind, failures.filter((f) => f === kind).length] as const)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${n} ${ATTEMPT_WORDS[kind]}`);
  const unreached = failures.every((f) => f === 'unreachable' || f === 'host_key_mismatch');
  const why = unreached
    ? 'The target could not be reached: check its address, SSH port and host key, or ask the operator.'
    : 'Inspect why instead (ps, strace -f -p PID, lsof, the logs), or ask the operator.';
  return (
    `This command did not succeed ${failures.length} times on the same final target as ${target} in this session (${tally.join(', ')}), ` +
    `however it is wrapped (sh -c, sudo, ssh, pct exec). Do not run it again. ${why}`
  );
}

function requireOpen(state: SessionState, action: string): void {
  if (state.status === 'done' || state.status === 'failed') {
    throw new RuleViolation('session_closed', `The session is ${state.status}; set a goal or post a message to reopen it before you ${action}.`);
  }
}

function requireExecution(state: SessionState, executionId: string): Execution {
  const execution = state.executions.get(executionId);
  if (!execution) throw new NotFound('execution', `There is no execution ${executionId} in this session.`, 'execution_not_found');
  return execution;
}

function requirePending(state: SessionState, approvalId: string, action: string): Approval {
  const approval = state.approvals.get(approvalId);
  if (!approval) throw new NotFound('approval', `There is no approval ${approvalId} in this session.`, 'approval_not_found');
  if (approval.status !== 'pending') throw new RuleViolation('approval_decided', `Approval ${approvalId} is already ${approval.status}; it cannot ${action === 'approve' ? 'be approved' : 'be denied'} now.`);
  return approval;
}
