// The policy what-if's pure core: past executions, grouped by the command, the target and the policy version in
// force when they were requested, decided again under today's classifier with that version and with a candidate;
// what would change, the newest executions of each change, and the newly allowed ones that must stand out (an
// operator denied them, or their run failed or timed out).
import type { Actor } from '../messages.ts';
import type { JudgedPart, Verdict } from '../risk/index.ts';
import { decide } from './decide.ts';
import type { Decision, Policy } from './document.ts';

/** Samples of each change, and flagged executions of each flag, listed at most. */
export const WHAT_IF_SAMPLES = 20;
export const WHAT_IF_FLAGGED = 50;

/** An execution as the what-if refers to it: its id, and the log position of its request (the newest is the highest). */
export interface ExecutionRef {
  readonly id: string;
  readonly position: number;
}

/** Past executions of one command on one target, requested while the same policy version was in force. */
export interface ReplayGroup {
  readonly command: string;
  readonly target: string;
  /** The policy in force then: an index into the policies given to planWhatIf (0: none was). */
  readonly epoch: number;
  readonly count: number;
  /** How many of them an operator's denial stopped. */
  readonly denied: number;
  /** How many of them ran and failed or timed out. */
  readonly failed: number;
  /** ISO times of the first and last request. */
  readonly firstAt: string;
  readonly lastAt: string;
  /** The newest of them, newest first (at least as many as a change lists); likewise the newest denied and failed (as many as a flag lists). */
  readonly recent: readonly ExecutionRef[];
  readonly recentDenied: readonly ExecutionRef[];
  readonly recentFailed: readonly ExecutionRef[];
}

/** Today's classifier on a command: its verdict and the parts a policy's rules are matched on. */
export interface CommandJudgement {
  readonly verdict: Verdict;
  readonly parts: readonly JudgedPart[];
}

/** A policy version as the what-if replays under it (version 0, policy null: no policy, the classifier decides). */
export interface PolicyThen {
  readonly version: number;
  readonly policy: Policy | null;
}

export const CHANGES = ['unchanged', 'newly_allowed', 'newly_asked', 'newly_denied'] as const;
export type Change = (typeof CHANGES)[number];
type Listed = Exclude<Change, 'unchanged'>;
export const FLAGS = ['allowed_once_denied', 'allowed_once_failed'] as const;
export type Flag = (typeof FLAGS)[number];

const NEWLY: Readonly<Record<Decision, Listed>> = { allow: 'newly_allowed', ask: 'newly_asked', deny: 'newly_denied' };

/** What the change is from the decision then to the candidate's. */
export const changeOf = (then: Decision, now: Decision): Change => (then === now ? 'unchanged' : NEWLY[now]);

/** One execution picked to be shown, with what was decided then and what the candidate decides. */
export interface Picked {
  readonly ref: ExecutionRef;
  readonly decisionThen: Decision;
  readonly decisionNow: Decision;
  /** The rule that decides under the candidate (`classifier`, `floor` or a rule's id). */
  readonly ruleId: string;
  readonly policyVersionThen: number;
}

/** The whole replay, counted, with the executions to show picked but not yet read. */
export interface WhatIfPlan {
  readonly replayed: number;
  readonly from: string | null;
  readonly to: string | null;
  readonly commands: number;
  readonly changes: Readonly<Record<Change, number>>;
  readonly flagged: Readonly<Record<Flag, number>>;
  readonly picks: Readonly<Record<Listed | Flag, readonly Picked[]>>;
}

export interface WhatIfLimits {
  readonly samples: number;
  readonly flagged: number;
}

/** The newest `limit` of the refs, newest first; the same answer for the same refs, whatever their order. */
function newest(candidates: Array<{ ref: ExecutionRef; pick: Omit<Picked, 'ref'> }>, limit: number): Picked[] {
  candidates.sort((a, b) => b.ref.position - a.ref.position || (a.ref.id < b.ref.id ? -1 : a.ref.id > b.ref.id ? 1 : 0));
  return candidates.slice(0, limit).map(({ ref, pick }) => ({ ref, ...pick }));
}

/**
 * Decides every group under the policy in force then (`policiesThen[group.epoch]`) and under the candidate, each
 * command with the judgement given for it (every command of the groups must have one), and counts executions.
 */
export function planWhatIf(input: {
  readonly groups: readonly ReplayGroup[];
  readonly judgements: ReadonlyMap<string, CommandJudgement>;
  readonly policiesThen: readonly PolicyThen[];
  readonly candidate: Policy;
  readonly limits?: WhatIfLimits;
}): WhatIfPlan {
  const limits = input.limits ?? { samples: WHAT_IF_SAMPLES, flagged: WHAT_IF_FLAGGED };
  const changes: Record<Change, number> = { unchanged: 0, newly_allowed: 0, newly_asked: 0, newly_denied: 0 };
  const flagged: Record<Flag, number> = { allowed_once_denied: 0, allowed_once_failed: 0 };
  const candidates: Record<Listed | Flag, Array<{ ref: ExecutionRef; pick: Omit<Picked, 'ref'> }>> = {
    newly_allowed: [], newly_asked: [], newly_denied: [], allowed_once_denied: [], allowed_once_failed: [],
  };
  let replayed = 0;
  let from: string | null = null;
  let to: string | null = null;
  const commands = new Set<string>();

  for (const group of input.groups) {
    const judged = input.judgements.get(group.command);
    if (judged === undefined) throw new Error(`what-if: no judgement for a command of the replay (${group.command.slice(0, 80)})`);
    const then = input.policiesThen[group.epoch];
    if (then === undefined) throw new Error(`what-if: no policy version for epoch ${group.epoch}`);
    commands.add(group.command);
    replayed += group.count;
    if (from === null || group.firstAt < from) from = group.firstAt;
    if (to === null || group.lastAt > to) to = group.lastAt;

    const decisionThen = decide(then.policy, group.command, group.target, judged.verdict, judged.parts).decision;
    const now = decide(input.candidate, group.command, group.target, judged.verdict, judged.parts);
    const change = changeOf(decisionThen, now.decision);
    changes[change] += group.count;
    if (change === 'unchanged') continue;
    const pick = { decisionThen, decisionNow: now.decision, ruleId: now.rule_id, policyVersionThen: then.version };
    for (const ref of group.recent.slice(0, limits.samples)) candidates[change].push({ ref, pick });
    if (change !== 'newly_allowed') continue;
    flagged.allowed_once_denied += group.denied;
    flagged.allowed_once_failed += group.failed;
    for (const ref of group.recentDenied.slice(0, limits.flagged)) candidates.allowed_once_denied.push({ ref, pick });
    for (const ref of group.recentFailed.slice(0, limits.flagged)) candidates.allowed_once_failed.push({ ref, pick });
  }

  return {
    replayed,
    from,
    to,
    commands: commands.size,
    changes,
    flagged,
    picks: {
      newly_allowed: newest(candidates.newly_allowed, limits.samples),
      newly_asked: newest(candidates.newly_asked, limits.samples),
      newly_denied: newest(candidates.newly_denied, limits.samples),
      allowed_once_denied: newest(candidates.allowed_once_denied, limits.flagged),
      allowed_once_failed: newest(candidates.allowed_once_failed, limits.flagged),
    },
  };
}

/** What the read model says of a picked execution. */
export interface ExecutionDetail {
  readonly session_id: string;
  readonly target: string;
  readonly command: string;
  /** ISO time of the request. */
  readonly at: string;
  /** Who approved or denied its approval; null when nobody did. */
  readonly decided_by: Actor | null;
  /** How it ended: the execution's status (succeeded, failed, timed_out, denied, expired, refused, …). */
  readonly outcome: string;
}

export interface WhatIfSample extends ExecutionDetail {
  readonly execution_id: string;
  readonly decision_then: Decision;
  readonly decision_now: Decision;
  /** The rule that decides under the candidate. */
  readonly rule_id: string;
  readonly policy_version_then: number;
}

export interface WhatIfResult {
  readonly replayed: number;
  readonly from: string | null;
  readonly to: string | null;
  readonly changes: Readonly<Record<Change, number>>;
  readonly samples: Readonly<Record<Listed, WhatIfSample[]>>;
  readonly flags: Readonly<Record<Flag, WhatIfSample[]>>;
  /** How many executions each flag holds (its list shows the newest). */
  readonly flag_counts: Readonly<Record<Flag, number>>;
  /** Distinct commands replayed (each judged once). */
  readonly commands: number;
}

/** The plan with its picked executions filled in from the read model (one it no longer has is left out). */
export function whatIfResult(plan: WhatIfPlan, details: ReadonlyMap<string, ExecutionDetail>): WhatIfResult {
  const samples = (picks: readonly Picked[]): WhatIfSample[] =>
    picks.flatMap((p) => {
      const detail = details.get(p.ref.id);
      return detail === undefined
        ? []
        : [{ ...detail, execution_id: p.ref.id, decision_then: p.decisionThen, decision_now: p.decisionNow, rule_id: p.ruleId, policy_version_then: p.policyVersionThen }];
    });
  const { picks } = plan;
  return {
    replayed: plan.replayed,
    from: plan.from,
    to: plan.to,
    changes: plan.changes,
    samples: { newly_allowed: samples(picks.newly_allowed), newly_asked: samples(picks.newly_asked), newly_denied: samples(picks.newly_denied) },
    flags: { allowed_once_denied: samples(picks.allowed_once_denied), allowed_once_failed: samples(picks.allowed_once_failed) },
    flag_counts: plan.flagged,
    commands: plan.commands,
  };
}

/** Every execution a plan shows, once. */
export const pickedIds = (plan: WhatIfPlan): string[] => [...new Set(Object.values(plan.picks).flatMap((picks) => picks.map((p) => p.ref.id)))];
