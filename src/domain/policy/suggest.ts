// Approval fatigue answered with evidence: from the approvals decided in the log, the allow rules an operator could
// adopt for commands approved again and again — each the narrowest rule over them, on the targets they ran on,
// matching none of the commands denied there nor any whose approved run failed, and nothing below the floor.
import type { JudgedPart } from '../risk/index.ts';
import { decide } from './decide.ts';
import { MAX_ALTERNATIVES, MAX_MATCH_WORDS, MAX_TARGETS, MAX_TEXT, type MatchWord, type Policy, type PolicyRule } from './document.ts';
import { belowFloor } from './floor.ts';
import { ruleMatches } from './match.ts';
import type { CommandJudgement } from './what-if.ts';

/** One decided approval, as the approvals read model holds it beside its execution. */
export interface DecidedApproval {
  readonly command: string;
  readonly target: string;
  readonly session_id: string;
  readonly status: 'granted' | 'denied' | 'expired';
  /** How the approved execution ended (the executions read model's status); null when it has no row. */
  readonly outcome: string | null;
  /** Seconds from the request to the grant; null unless granted. */
  readonly wait_s: number | null;
  /** From a deleted session: what it vetoes (a denial, a failed run) still counts; what it speaks for does not. */
  readonly session_deleted: boolean;
}

export interface SuggestionEvidence {
  /** Grants of commands the rule would now let run at once. */
  readonly approvals: number;
  /** Denials of commands the rule matches on its targets: always 0 in a suggestion offered. */
  readonly denials: number;
  readonly sessions: number;
  /** Approvals of commands the rule matches on its targets that expired unanswered. */
  readonly expired: number;
  readonly median_wait_s: number | null;
}

export interface Suggestion {
  readonly rule: PolicyRule;
  readonly evidence: SuggestionEvidence;
}

export const DEFAULT_MIN_APPROVALS = 3;
const EXAMPLES_EACH = 5;
const ID_PREFIX = 'suggested-';
const MAX_ID = 100;

/** Runs whose end speaks against letting the command run unasked. */
const BAD_OUTCOMES: ReadonlySet<string> = new Set(['failed', 'timed_out']);

type Words = readonly string[];

interface Judged extends DecidedApproval {
  readonly judged: CommandJudgement;
}

/** An approved command's evidence for one exact rule (its key part's words) on one target. */
interface Grant {
  readonly approval: Judged;
  readonly key: Words;
}

/** The words one rule would allow, with the grants behind it and the targets it holds on. */
interface Group {
  readonly match: readonly MatchWord[];
  readonly targets: readonly string[];
  readonly grants: readonly Grant[];
  /** The exact word lists merged in it (one unless alternatives were merged), each with its grants. */
  readonly members: readonly { readonly key: Words; readonly grants: readonly Grant[] }[];
}

const provisional = (match: readonly MatchWord[], targets: readonly string[]): PolicyRule => ({
  id: 'suggestion',
  match: [...match],
  targets: [...targets],
  decision: 'allow',
  justification: 'suggested',
});

const matchesAnyPart = (rule: PolicyRule, judged: CommandJudgement): boolean => judged.parts.some((part) => ruleMatches(rule, part));

/**
 * The one part an allow rule would have to cover for the command to run unasked, or null when the command cannot
 * be the evidence of one: something in it is below the floor, the classifier already allows all of it, more than one
 * part needs covering (one rule each, left to the operator), or a word of that part is known only at run time.
 */
function keyPart(judged: CommandJudgement): Words | null {
  if (belowFloor(judged.verdict) || judged.parts.length === 0 || judged.parts.some(belowFloor)) return null;
  const asked = judged.parts.filter((part) => part.risk_class !== 'reversible_low');
  const argv = asked.length === 1 ? asked[0]!.argv : null;
  if (argv === null || argv.length > MAX_MATCH_WORDS) return null;
  const words = argv.filter((word): word is string => word !== null && word.length <= MAX_TEXT);
  return words.length === argv.length ? words : null;
}

const keyOf = (words: readonly MatchWord[]): string => JSON.stringify(words);

/** Commands that speak against a rule on their target: the denied ones, or the approved ones whose run failed or timed out. */
class Vetoes {
  private readonly byTarget = new Map<string, Judged[]>();

  add(approval: Judged): void {
    const list = this.byTarget.get(approval.target);
    if (list === undefined) this.byTarget.set(approval.target, [approval]);
    else list.push(approval);
  }

  /** Whether the rule matches a part of a vetoed command on the target. */
  hit(rule: PolicyRule, target: string): boolean {
    return this.on(target).some((approval) => matchesAnyPart(rule, approval.judged));
  }

  /** How many vetoed commands the rule matches a part of on its targets. */
  count(rule: PolicyRule): number {
    return rule.targets.reduce((n, target) => n + this.on(target).filter((approval) => matchesAnyPart(rule, approval.judged)).length, 0);
  }

  on(target: string): readonly Judged[] {
    return this.byTarget.get(target) ?? [];
  }
}

/**
 * Whether the grant is evidence for the rule: the policy in force asks for the command (or would refuse it), and
 * with the rule added it would run at once. A command of several parts the rule leaves one uncovered is still asked.
 */
function turnsToAllow(policy: Policy | null, rule: PolicyRule, { approval }: Grant): boolean {
  const { command, target, judged } = approval;
  if (decide(policy, command, target, judged.verdict, judged.parts).decision === 'allow') return false;
  const candidate: Policy = { rules: [...(policy?.rules ?? []), rule] };
  return decide(candidate, command, target, judged.verdict, judged.parts).decision === 'allow';
}

/**
 * One group per exact word list: the targets it was approved on where no denied command and no failed run of an
 * approved one is matched by it, and the grants there the rule would turn into runs.
 */
function exactGroups(grants: readonly Grant[], denied: Vetoes, failed: Vetoes, policy: Policy | null): Group[] {
  const byKey = new Map<string, Map<string, Grant[]>>();
  for (const grant of grants) {
    const key = keyOf(grant.key);
    const targets = byKey.get(key) ?? new Map<string, Grant[]>();
    byKey.set(key, targets);
    targets.set(grant.approval.target, [...(targets.get(grant.approval.target) ?? []), grant]);
  }
  const groups: Group[] = [];
  for (const cells of byKey.values()) {
    const kept: Grant[] = [];
    const targets: string[] = [];
    for (const [target, cell] of cells) {
      const rule = provisional(cell[0]!.key, [target]);
      if (denied.hit(rule, target) || failed.hit(rule, target)) continue;
      const turned = cell.filter((grant) => turnsToAllow(policy, rule, grant));
      if (turned.length === 0) continue;
      kept.push(...turned);
      targets.push(target);
    }
    if (kept.length === 0 || targets.length > MAX_TARGETS) continue;
    const key = kept[0]!.key;
    groups.push({ match: key, targets: targets.sort(), grants: kept, members: [{ key, grants: kept }] });
  }
  return groups;
}

/** The word list with position `at` left out, for finding lists that differ there only. */
const restKey = (key: Words, at: number, targets: readonly string[]): string => JSON.stringify([key.length, at, key.filter((_, i) => i !== at), targets]);

/**
 * Exact groups on the same targets whose words agree but in one position become one rule with the alternatives
 * there: it matches exactly what they match together, so it matches nothing denied or failed that they did not.
 * Families with the most approvals are merged first; each group joins one family at most.
 */
function mergeAlternatives(groups: readonly Group[]): Group[] {
  const families = new Map<string, { at: number; members: Group[] }>();
  for (const group of groups) {
    const key = group.members[0]!.key;
    key.forEach((_, at) => {
      const family = families.get(restKey(key, at, group.targets)) ?? { at, members: [] };
      family.members.push(group);
      families.set(restKey(key, at, group.targets), family);
    });
  }
  const total = (members: readonly Group[]) => members.reduce((n, g) => n + g.grants.length, 0);
  const ordered = [...families.entries()]
    .filter(([, family]) => family.members.length > 1)
    .sort(([ka, a], [kb, b]) => total(b.members) - total(a.members) || (ka < kb ? -1 : ka > kb ? 1 : 0));
  const taken = new Set<Group>();
  const merged: Group[] = [];
  for (const [, { at, members }] of ordered) {
    const free = members
      .filter((g) => !taken.has(g))
      .sort((a, b) => (keyOf(a.match) < keyOf(b.match) ? -1 : 1))
      .slice(0, MAX_ALTERNATIVES);
    if (free.length < 2) continue;
    for (const g of free) taken.add(g);
    const first = free[0]!.members[0]!.key;
    const alternatives = free.map((g) => g.members[0]!.key[at]!).sort();
    merged.push({
      match: first.map((word, i) => (i === at ? alternatives : word)),
      targets: free[0]!.targets,
      grants: free.flatMap((g) => g.grants),
      members: free.flatMap((g) => g.members),
    });
  }
  return [...merged, ...groups.filter((g) => !taken.has(g))];
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Math.round(value * 10) / 10;
}

/** Distinct texts, the most frequent first (then in code-point order), short enough to be examples. */
function byFrequency(texts: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const text of texts) if (text.length <= MAX_TEXT) counts.set(text, (counts.get(text) ?? 0) + 1);
  return [...counts.entries()].sort(([ta, a], [tb, b]) => b - a || (ta < tb ? -1 : ta > tb ? 1 : 0)).map(([text]) => text);
}

/** The approved commands, the most frequent of each merged word list first so that every alternative has one. */
function matchExamples(group: Group): string[] {
  const lists = group.members.map((m) => byFrequency(m.grants.map((g) => g.approval.command)));
  const firsts = lists.map((list) => list[0]).filter((text): text is string => text !== undefined);
  const rest = byFrequency(group.grants.map((g) => g.approval.command)).filter((text) => !firsts.includes(text));
  return [...new Set([...firsts, ...rest])].slice(0, EXAMPLES_EACH);
}

const wordIs = (expected: MatchWord, word: string | null | undefined): boolean =>
  word !== null && word !== undefined && (typeof expected === 'string' ? word === expected : expected.includes(word));

/** How many of the rule's first words the part starts with. */
function sharedWords(match: readonly MatchWord[], part: JudgedPart): number {
  let n = 0;
  while (n < match.length && wordIs(match[n]!, part.argv?.[n])) n++;
  return n;
}

/**
 * Denied neighbours: commands denied on the rule's targets with a part that starts with the rule's first word, the
 * ones sharing the most leading words first. The rule matches none of them (else the target would have been left out).
 */
function notMatchExamples(rule: PolicyRule, denied: Vetoes): string[] {
  const scored = new Map<string, number>();
  for (const target of rule.targets) {
    for (const approval of denied.on(target)) {
      if (approval.command.length > MAX_TEXT || matchesAnyPart(rule, approval.judged)) continue;
      const shared = Math.max(0, ...approval.judged.parts.map((part) => sharedWords(rule.match, part)));
      if (shared > 0) scored.set(approval.command, Math.max(shared, scored.get(approval.command) ?? 0));
    }
  }
  return [...scored.entries()]
    .sort(([ta, a], [tb, b]) => b - a || (ta < tb ? -1 : ta > tb ? 1 : 0))
    .map(([text]) => text)
    .slice(0, EXAMPLES_EACH);
}

/** `suggested-` and the rule's words, in the characters an id may hold, unique among `taken`. */
function ruleId(match: readonly MatchWord[], taken: Set<string>): string {
  const words = match.flatMap((word) => (typeof word === 'string' ? [word] : word)).join('-');
  const base = `${ID_PREFIX}${words}`.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/-{2,}/g, '-').replace(/-$/, '').slice(0, MAX_ID - 4);
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  taken.add(id);
  return id;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The suggestions, the most approved first: one allow rule per group of commands approved at least `minApprovals`
 * times (grants in deleted sessions do not count), with the evidence behind it. `judged` reads a command the way the
 * classifier does today; a command it has no reading for is left out, speaking neither for a rule nor against one.
 * Each rule is proven here only against the log: the caller loads it beside the policy in force before offering it.
 */
export function suggestRules(
  approvals: readonly DecidedApproval[],
  judged: (command: string) => CommandJudgement | undefined,
  policy: Policy | null,
  options: { readonly minApprovals: number },
): Suggestion[] {
  const denied = new Vetoes();
  const failed = new Vetoes();
  const expired: Judged[] = [];
  const grants: Grant[] = [];
  for (const approval of approvals) {
    const reading = judged(approval.command);
    if (reading === undefined) continue;
    const one: Judged = { ...approval, judged: reading };
    if (approval.status === 'denied') denied.add(one);
    else if (approval.status === 'granted' && approval.outcome !== null && BAD_OUTCOMES.has(approval.outcome)) failed.add(one);
    if (approval.session_deleted) continue;
    if (approval.status === 'expired') expired.push(one);
    const key = approval.status === 'granted' ? keyPart(reading) : null;
    if (key !== null) grants.push({ approval: one, key });
  }

  const qualified = exactGroups(grants, denied, failed, policy).filter((g) => g.grants.length >= options.minApprovals);
  const taken = new Set(policy?.rules.map((r) => r.id) ?? []);
  const suggestions: Suggestion[] = [];
  const ordered = mergeAlternatives(qualified).sort((a, b) => b.grants.length - a.grants.length || (keyOf(a.match) < keyOf(b.match) ? -1 : 1));
  for (const group of ordered) {
    const rule = provisional(group.match, group.targets);
    // Proven per exact word list and target already; counted again over the rule as offered, which must find none.
    const denials = denied.count(rule);
    if (denials > 0 || failed.count(rule) > 0) continue;
    const sessions = new Set(group.grants.map((g) => g.approval.session_id)).size;
    const evidence: SuggestionEvidence = {
      approvals: group.grants.length,
      denials,
      sessions,
      expired: expired.filter((a) => rule.targets.includes(a.target) && matchesAnyPart(rule, a.judged)).length,
      median_wait_s: median(group.grants.flatMap((g) => (g.approval.wait_s === null ? [] : [g.approval.wait_s]))),
    };
    const notMatch = notMatchExamples(rule, denied);
    suggestions.push({
      rule: {
        id: ruleId(group.match, taken),
        match: rule.match,
        targets: rule.targets,
        decision: 'allow',
        justification: `approved ${plural(evidence.approvals, 'time')} in ${plural(sessions, 'session')} on ${rule.targets.join(', ')}, never denied there; no approved run of it failed or timed out`,
        examples: { match: matchExamples(group), ...(notMatch.length > 0 && { not_match: notMatch }) },
      },
      evidence,
    });
  }
  return suggestions;
}
