// Loading a policy document: the document's shape, each rule's, unique ids, and every rule's examples proven with
// the same matcher and the same classifier walk that `decide` uses. Every problem is reported, not only the first.
import { judgedParts } from '../risk/index.ts';
import { MAX_RULES, PolicyRule, PolicyRuleId, PolicyShape } from './document.ts';
import type { Policy } from './document.ts';
import { belowFloor } from './floor.ts';
import { ruleMatches } from './match.ts';

export interface PolicyProblem {
  /** The rule's id, `rules[N]` when it has no valid id, null for the document as a whole. */
  readonly rule_id: string | null;
  /** The example the problem is with. */
  readonly example?: string;
  readonly message: string;
}

export type LoadedPolicy = { readonly ok: true; readonly policy: Policy } | { readonly ok: false; readonly problems: PolicyProblem[] };

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

const fieldPath = (path: readonly PropertyKey[]): string =>
  path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');

/** Problems from zod's issues, each naming its field from the document's root (`rules[3].match[1]`). */
function issueProblems(issues: readonly Issue[], ruleId: string | null, at: readonly PropertyKey[] = []): PolicyProblem[] {
  return issues.map(({ path, message }) => {
    const field = fieldPath([...at, ...path]);
    return { rule_id: ruleId, message: field === '' ? message : `${field}: ${message}` };
  });
}

/** A rule's name in problems: its id when it has a valid one, its place in the document otherwise. */
function ruleName(raw: unknown, index: number): string {
  const id = PolicyRuleId.safeParse(typeof raw === 'object' && raw !== null && 'id' in raw ? raw.id : undefined);
  return id.success ? id.data : `rules[${index}]`;
}

function duplicateProblems(rules: readonly unknown[]): PolicyProblem[] {
  const first = new Map<string, number>();
  return rules.flatMap((raw, index) => {
    const name = ruleName(raw, index);
    if (name === `rules[${index}]`) return [];
    const seen = first.get(name);
    if (seen === undefined) {
      first.set(name, index);
      return [];
    }
    return [{ rule_id: name, message: `duplicate id: rules[${index}] has the id of rules[${seen}]` }];
  });
}

const commandsIn = (parts: ReturnType<typeof judgedParts>): string => {
  const commands = parts.filter((p) => p.argv !== null).map((p) => `\`${p.text}\``);
  return commands.length === 0 ? 'the classifier finds no simple command in it' : `the commands in it are ${commands.join(', ')}`;
};

function exampleProblems(rule: PolicyRule): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  const problem = (example: string, message: string) => problems.push({ rule_id: rule.id, example, message });
  for (const example of rule.examples?.match ?? []) {
    const parts = judgedParts(example);
    if (!parts.some((part) => ruleMatches(rule, part))) problem(example, `the rule does not match this example: ${commandsIn(parts)}`);
    const floor = rule.decision === 'allow' ? parts.find(belowFloor) : undefined;
    if (floor !== undefined) {
      problem(example, `an allow rule cannot cover this example: the classifier judges \`${floor.text}\` ${floor.risk_class} (${floor.rule}), which is always asked`);
    }
  }
  for (const example of rule.examples?.not_match ?? []) {
    const part = judgedParts(example).find((p) => ruleMatches(rule, p));
    if (part !== undefined) problem(example, `the rule matches this example, which it must not: \`${part.text}\``);
  }
  return problems;
}

const rulesOf = (input: unknown): readonly unknown[] | undefined =>
  typeof input === 'object' && input !== null && 'rules' in input && Array.isArray(input.rules) ? (input.rules as unknown[]) : undefined;

/** Examples across a document: each is classified when it loads (a few ms each), so a document's load stays bounded. */
export const MAX_DOCUMENT_EXAMPLES = 2_000;

const examplesIn = (rules: readonly unknown[]): number =>
  rules.reduce<number>((n, rule) => {
    const examples = typeof rule === 'object' && rule !== null && 'examples' in rule ? (rule.examples as { match?: unknown; not_match?: unknown } | null) : null;
    const count = (list: unknown) => (Array.isArray(list) ? list.length : 0);
    return n + (examples === null || typeof examples !== 'object' ? 0 : count(examples.match) + count(examples.not_match));
  }, 0);

/** Reads a policy document (already parsed from YAML or JSON): the policy, or every problem found in it. */
export function loadPolicy(input: unknown): LoadedPolicy {
  const shape = PolicyShape.safeParse(input);
  const problems = shape.success ? [] : issueProblems(shape.error.issues, null);
  const raw = rulesOf(input);
  const rules: PolicyRule[] = [];
  const examples = raw === undefined ? 0 : examplesIn(raw);
  if (examples > MAX_DOCUMENT_EXAMPLES) problems.push({ rule_id: null, message: `the document has ${examples} examples; at most ${MAX_DOCUMENT_EXAMPLES} are checked at load` });
  if (raw !== undefined && raw.length <= MAX_RULES && examples <= MAX_DOCUMENT_EXAMPLES) {
    raw.forEach((entry, index) => {
      const parsed = PolicyRule.safeParse(entry);
      if (!parsed.success) {
        problems.push(...issueProblems(parsed.error.issues, ruleName(entry, index), ['rules', index]));
        return;
      }
      rules.push(parsed.data);
      problems.push(...exampleProblems(parsed.data));
    });
    problems.push(...duplicateProblems(raw));
  }
  return problems.length === 0 ? { ok: true, policy: { rules } } : { ok: false, problems };
}
