// Every rule proves itself: each of its examples must classify with exactly that rule and class.
import { describe, expect, it } from 'vitest';
import { RULES, classify } from '../../../src/domain/risk/index.ts';

describe('the rule set', () => {
  it('has unique ids', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every rule at least one example', () => {
    expect(RULES.filter((r) => r.examples.length === 0).map((r) => r.id)).toEqual([]);
  });

  describe.each(RULES.map((r) => [r.id, r] as const))('rule %s', (_id, rule) => {
    it.each(rule.examples.map((e) => [e]))('classifies %j with this rule', (example) => {
      const verdict = classify(example);
      expect({ rule: verdict.rule, risk_class: verdict.risk_class }).toEqual({ rule: rule.id, risk_class: rule.class });
    });
  });
});
