// What changed between two versions of the policy, by rule id: rules added, removed, and changed (with the fields
// that differ). The order of the rules is not compared: the strictest matching rule decides wherever it stands.
import type { PolicyRule } from './types.ts';

export const RULE_FIELDS = ['match', 'targets', 'decision', 'justification', 'examples'] as const;
export type RuleField = (typeof RULE_FIELDS)[number];

export interface RulesDiff {
  added: PolicyRule[];
  removed: PolicyRule[];
  changed: Array<{ id: string; fields: RuleField[]; before: PolicyRule; after: PolicyRule }>;
}

export function diffRules(before: readonly PolicyRule[], after: readonly PolicyRule[]): RulesDiff {
  const old = new Map(before.map((r) => [r.id, r]));
  const now = new Set(after.map((r) => r.id));
  const diff: RulesDiff = { added: [], removed: before.filter((r) => !now.has(r.id)), changed: [] };
  for (const rule of after) {
    const was = old.get(rule.id);
    if (was === undefined) {
      diff.added.push(rule);
      continue;
    }
    // Both were loaded by the server through one schema, which writes an object's keys in one order.
    const fields = RULE_FIELDS.filter((f) => JSON.stringify(was[f]) !== JSON.stringify(rule[f]));
    if (fields.length > 0) diff.changed.push({ id: rule.id, fields, before: was, after: rule });
  }
  return diff;
}

export const unchanged = (diff: RulesDiff): boolean => diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
