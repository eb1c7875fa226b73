// The policy's decision on a command: the strictest rule matching any of the parts the classifier judged, never
// looser than the classifier's verdict when a part is left uncovered, and never an allow below the floor.
import type { JudgedPart, Verdict } from '../risk/index.ts';
import { judgedParts } from '../risk/index.ts';
import type { Decision, Policy, PolicyRule } from './document.ts';
import { belowFloor } from './floor.ts';
import { ruleMatches } from './match.ts';
import { coversTarget } from './targets.ts';

export interface PolicyDecision {
  readonly decision: Decision;
  /** The rule that decided; `classifier` when the classifier's verdict did, `floor` when the floor turned an allow into ask. */
  readonly rule_id: string;
  /** Which rule matched which part, and why the decision is what it is. */
  readonly reasons: string[];
}

const STRICTNESS: Readonly<Record<Decision, number>> = { allow: 0, ask: 1, deny: 2 };

// Reasons stay a few short lines however long or many-parted the command.
const MAX_LISTED = 10;
const shorten = (text: string): string => (text.length > 120 ? `${text.slice(0, 120)}…` : text);

/** What the classifier's verdict decides on its own: a read runs at once, anything else is asked. */
export const classifierDecision = (verdict: Pick<Verdict, 'risk_class'>): Decision => (verdict.risk_class === 'reversible_low' ? 'allow' : 'ask');

/** The first of the strictest. */
function strictest<T>(items: readonly T[], decision: (item: T) => Decision): T | undefined {
  let best: T | undefined;
  for (const item of items) if (best === undefined || STRICTNESS[decision(item)] > STRICTNESS[decision(best)]) best = item;
  return best;
}

const verdictText = (verdict: Verdict): string => `${verdict.risk_class} (${verdict.rule}): ${shorten(verdict.reason)}`;

function listed(texts: readonly string[]): string {
  const shown = texts.slice(0, MAX_LISTED).map((t) => `\`${shorten(t)}\``).join(', ');
  return texts.length > MAX_LISTED ? `${shown} and ${texts.length - MAX_LISTED} more` : shown;
}

interface Covered {
  readonly part: JudgedPart;
  readonly rule: PolicyRule;
}

/**
 * The decision on `command` run on `target`, given the classifier's verdict on it. Without a policy, or with no rule
 * matching a part of the command on that target, the verdict decides (read-only: allow; anything else: ask). The
 * command's parts are walked (`judgedParts`) only when a rule holds on the target, unless the caller passes them
 * (judged once for several policies, or read from where they were kept); a verdict the classifier could not give
 * (too slow, failed) has no parts to pass: every part then counts as uncovered, and the floor asks.
 */
export function decide(policy: Policy | null, command: string, target: string, verdict: Verdict, judged?: readonly JudgedPart[]): PolicyDecision {
  const fallback = classifierDecision(verdict);
  const rules = policy?.rules.filter((rule) => coversTarget(rule.targets, target)) ?? [];
  const parts = rules.length === 0 ? [] : (judged ?? judgedParts(command));
  const covered: Covered[] = [];
  const uncovered: JudgedPart[] = [];
  for (const part of parts) {
    const rule = strictest(rules.filter((r) => ruleMatches(r, part)), (r) => r.decision);
    if (rule === undefined) uncovered.push(part);
    else covered.push({ part, rule });
  }
  const decisive = strictest(covered, (c) => c.rule.decision);
  if (decisive === undefined) {
    const none = policy === null ? 'no policy' : rules.length === 0 ? `no rule holds on ${target}` : 'no rule matches a part of the command';
    return { decision: fallback, rule_id: 'classifier', reasons: [`${none}: the classifier decides, ${verdictText(verdict)}`] };
  }

  const reasons = covered.slice(0, MAX_LISTED).map(({ part, rule }) => `rule ${rule.id} (${rule.decision}) matches \`${shorten(part.text)}\``);
  if (covered.length > MAX_LISTED) reasons.push(`and ${covered.length - MAX_LISTED} more parts matched`);
  let decision = decisive.rule.decision;
  let ruleId = decisive.rule.id;
  if (uncovered.length > 0) {
    reasons.push(`no rule matches ${listed(uncovered.map((p) => p.text))}, so the classifier's verdict on the whole command decides at least: ${verdictText(verdict)}`);
    if (STRICTNESS[fallback] > STRICTNESS[decision]) {
      decision = fallback;
      ruleId = 'classifier';
    }
  }
  if (decision === 'allow') {
    // The verdict names one part only: a floor rule may stand on another (a wrapper-option beside a tie).
    const part = parts.find(belowFloor);
    const floor = belowFloor(verdict) ? verdictText(verdict) : part && `${part.risk_class} (${part.rule}) for \`${shorten(part.text)}\``;
    if (floor !== undefined) {
      reasons.push(`floor: rule ${ruleId} allows it, but no rule allows what the classifier judges ${floor}`);
      return { decision: 'ask', rule_id: 'floor', reasons };
    }
  }
  reasons.push(ruleId === 'classifier' ? `${decision}: the classifier's verdict is stricter than the rules` : `${decision}: rule ${ruleId} is the strictest that matches`);
  return { decision, rule_id: ruleId, reasons };
}
