// One command judged once for everything that asks about it: the classifier's verdict, the decision of each policy
// given (the one in force, a candidate in shadow), and, when asked, the judged parts themselves (kept by the
// what-if so that a past command is not walked again). Runs where the classifier runs: inline for a short
// command, on a worker thread for a long one (src/adapters/classifier-pool.ts).
import { classify, classifyParts, type JudgedPart, judgedParts, type Verdict } from '../risk/index.ts';
import { decide, type PolicyDecision } from './decide.ts';
import type { Policy } from './document.ts';
import { coversTarget } from './targets.ts';

export interface JudgeRequest {
  readonly command: string;
  /** The target the decisions are for; without one, no policy is consulted. */
  readonly target?: string;
  /** The policies to decide under, in order (null: no policy). */
  readonly policies?: readonly (Policy | null)[];
  /** Whether to answer the judged parts too. */
  readonly parts?: boolean;
}

export interface Judgement {
  readonly verdict: Verdict;
  /** One per policy asked about, in the same order. */
  readonly decisions: PolicyDecision[];
  /** The judged parts, when asked for. */
  readonly parts?: JudgedPart[];
}

const holdsOn = (policy: Policy | null, target: string): boolean => policy !== null && policy.rules.some((rule) => coversTarget(rule.targets, target));

export function judge(request: JudgeRequest): Judgement {
  const { target } = request;
  const policies = request.policies ?? [];
  // One walk when the parts will be needed, the verdict's own walk when they will not.
  const needed = request.parts === true || (target !== undefined && policies.some((policy) => holdsOn(policy, target)));
  const walked = needed ? classifyParts(request.command) : null;
  const verdict = walked?.verdict ?? classify(request.command);
  let parts: JudgedPart[] | undefined = walked?.parts;
  const partsOf = () => (parts ??= judgedParts(request.command));
  const decisions = target === undefined ? [] : policies.map((policy) => decide(policy, request.command, target, verdict, holdsOn(policy, target) ? partsOf() : []));
  return request.parts === true ? { verdict, decisions, parts: partsOf() } : { verdict, decisions };
}

/**
 * What a command the classifier could not judge (too slow, failed) is decided under each policy: nothing of it is
 * known, so no rule matches a part, and the verdict (destructive) asks.
 */
export function unjudged(request: JudgeRequest, verdict: Verdict): Judgement {
  const { target } = request;
  const decisions = target === undefined ? [] : (request.policies ?? []).map((policy) => decide(policy, request.command, target, verdict, []));
  return request.parts === true ? { verdict, decisions, parts: [] } : { verdict, decisions };
}
