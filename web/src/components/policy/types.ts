// The policy lab's answers as the console reads them (GET /policy, /policy/history, /policy/shadow,
// /policy/suggestions, POST /policy/what-if); a rule is the server's own type (type-only).
import type { Decision, PolicyProblem, PolicyRule } from '../../../../src/domain/policy/index.ts';

export type { Decision, PolicyProblem, PolicyRule };

/** Who made a change, as the event's metadata records it. */
export type Who = { role: string; id?: string | null } | null;

export interface PolicyAnswer {
  version: number;
  digest: string | null;
  rules: PolicyRule[];
  updated_at: string | null;
  updated_by: Who;
}

export interface PolicyVersion {
  version: number;
  digest: string;
  rules: PolicyRule[];
  at: string;
  by: Who;
}

/** A past command replayed under a draft. */
export interface WhatIfSample {
  execution_id?: string;
  session_id: string;
  target: string;
  command: string;
  at: string;
  decision_then: Decision;
  /** What decides it under the draft, when the server says. */
  decision_now?: Decision;
  rule_id?: string;
  decided_by: Who | string;
  outcome: string | null;
}

export const CHANGES = ['newly_allowed', 'newly_asked', 'newly_denied'] as const;
export type Change = (typeof CHANGES)[number];

export interface WhatIf {
  replayed: number;
  from: string | null;
  to: string | null;
  changes: Record<Change | 'unchanged', number>;
  samples: Record<Change, WhatIfSample[]>;
  flags: { allowed_once_denied: WhatIfSample[]; allowed_once_failed: WhatIfSample[] };
  /** The flags' totals, where the lists are cut short. */
  flag_counts?: { allowed_once_denied: number; allowed_once_failed: number };
}

export interface Divergence {
  execution_id: string;
  session_id: string;
  target: string;
  command: string;
  at: string;
  decision: Decision;
  rule_id: string;
  shadow_decision: Decision;
  shadow_rule_id: string;
}

export interface ShadowAnswer {
  shadow: { shadow: number; digest: string; rules: PolicyRule[]; started_at: string; started_by: Who } | null;
  decided: number;
  diverged: number;
  divergences: Divergence[];
}

export interface Suggestion {
  rule: PolicyRule;
  evidence: { approvals: number; denials: number; sessions: number; expired: number; median_wait_s: number | null };
  what_if: WhatIf | null;
}
