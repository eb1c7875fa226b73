// An outcome the log contradicts: a task closed as `success` whose every change was denied, refused or failed
// (and at least one was asked for) did not succeed at what it set out to change, whatever the agent says. The rule
// reads the task's changes as the sessions projection tracks them and names each one and how it ended, so an
// auditor sees the evidence, not just a flag. Versioned, because changing it changes what the read model says.
import type { RiskClass } from './events.ts';

// 1: success with every change denied, refused, expired, cancelled, failed or timed out.
export const DISPUTE_RULES_VERSION = 1;

/**
 * Where a change stands. Still on its way (`requested`, `awaiting_approval`, `approved`, `running`) disputes
 * nothing yet; `succeeded` took effect; every other state means it did not.
 */
export type ChangeStatus =
  | 'requested'
  | 'awaiting_approval'
  | 'approved'
  | 'running'
  | 'succeeded'
  | 'denied'
  | 'expired'
  | 'cancelled'
  | 'refused'
  | 'failed'
  | 'timed_out';

/** A change: an execution the classifier did not class reversible_low (reads and small reversible steps are not). */
export interface Change {
  readonly execution_id: string;
  readonly target: string;
  /** Cut to CHANGE_COMMAND_CHARS: evidence, not the record (the session's executions hold the whole command). */
  readonly command: string;
  readonly risk_class: RiskClass;
  readonly approval_id: string | null;
  readonly status: ChangeStatus;
}

export const CHANGE_COMMAND_CHARS = 200;

/** Whether an execution of this class is a change the dispute rule counts. */
export const isChange = (riskClass: RiskClass): boolean => riskClass !== 'reversible_low';

const DID_NOT_TAKE_EFFECT: ReadonlySet<ChangeStatus> = new Set(['denied', 'expired', 'cancelled', 'refused', 'failed', 'timed_out']);
const UNDECIDED: ReadonlySet<ChangeStatus> = new Set(['requested', 'awaiting_approval', 'approved', 'running']);

export interface Dispute {
  /** In words: "closed as success, but its one change did not take effect: 1 denied". */
  readonly detail: string;
  /** Each change of the task and how it ended. */
  readonly changes: Array<Pick<Change, 'execution_id' | 'target' | 'command' | 'risk_class' | 'status'>>;
}

/** The dispute, or null when the outcome stands (not success, no change, or a change that took effect or may yet). */
export function deriveDispute(outcome: string | null, changes: readonly Change[]): Dispute | null {
  if (outcome !== 'success' || changes.length === 0) return null;
  if (changes.some((c) => c.status === 'succeeded' || UNDECIDED.has(c.status))) return null;
  const counts = new Map<ChangeStatus, number>();
  for (const c of changes) if (DID_NOT_TAKE_EFFECT.has(c.status)) counts.set(c.status, (counts.get(c.status) ?? 0) + 1);
  const how = [...counts].map(([status, n]) => `${n} ${status.replace('_', ' ')}`).join(', ');
  const n = changes.length;
  return {
    detail: `closed as success, but ${n === 1 ? 'its one change did not take effect' : `none of its ${n} changes took effect`}: ${how}`,
    changes: changes.map(({ execution_id, target, command, risk_class, status }) => ({ execution_id, target, command, risk_class, status })),
  };
}
