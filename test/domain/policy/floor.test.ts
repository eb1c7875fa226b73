// The floor's rule set names rules that exist, misses none that say what runs is unknown, and holds for every
// example of those rules and of every destructive rule, even when allow rules cover each command in it.
import { describe, expect, it } from 'vitest';
import { failedVerdict, tooSlowVerdict } from '../../../src/adapters/classifier-pool.ts';
import { RULES, judgedParts } from '../../../src/domain/risk/index.ts';
import { FLOOR_RULES, decide } from '../../../src/domain/policy/index.ts';
import { decideOn, policyOf } from './policies.ts';

const POOL_VERDICTS = [tooSlowVerdict('ls', 2000), failedVerdict('ls', 'thread crashed')];

describe('FLOOR_RULES', () => {
  it('names only rules the classifier has, or verdicts its worker pool gives in their place', () => {
    const known = new Set([...RULES.map((r) => r.id), ...POOL_VERDICTS.map((v) => v.rule)]);
    expect([...FLOOR_RULES].filter((id) => !known.has(id))).toEqual([]);
    expect(POOL_VERDICTS.map((v) => FLOOR_RULES.has(v.rule))).toEqual([true, true]);
  });

  it('holds every rule that says the shell may read the command differently, or that what runs is unknown', () => {
    const unknowable = RULES.filter((r) => r.id.startsWith('dialect-') || ['opaque-code', 'wrapper-option', 'unparseable', 'too-complex', 'nesting-too-deep'].includes(r.id));
    expect(unknowable.length).toBeGreaterThan(9);
    expect(unknowable.filter((r) => !FLOOR_RULES.has(r.id)).map((r) => r.id)).toEqual([]);
  });

  it('leaves out the rules that see what runs, so an allow can still cover a mutation', () => {
    expect(['service-change', 'package-change', 'unknown-command', 'opaque-wrapper', 'redirect-write'].filter((id) => FLOOR_RULES.has(id))).toEqual([]);
  });
});

describe('no example of a destructive or floor rule is allowed', () => {
  // Each command with an allow rule for the first word of every simple command in it: as much as a policy can allow.
  const allowAll = (command: string) => {
    const heads = [...new Set(judgedParts(command).flatMap((p) => (p.argv?.[0] == null ? [] : [p.argv[0]])))];
    return heads.length === 0 ? null : policyOf(...heads.map((head) => ({ match: [head], decision: 'allow' })));
  };
  const examples = RULES.filter((r) => r.class === 'destructive' || FLOOR_RULES.has(r.id)).flatMap((r) => r.examples.map((e) => [r.id, e] as const));

  it('even with every command in it allowed', () => {
    expect(examples.length).toBeGreaterThan(200);
    const allowed = examples.filter(([, e]) => decideOn(allowAll(e), e).decision === 'allow');
    expect(allowed).toEqual([]);
  }, 120_000);

  it('the floor, not a missing rule, is what refuses them where every command is covered', () => {
    const floored = examples.filter(([, e]) => decideOn(allowAll(e), e).rule_id === 'floor');
    expect(floored.length).toBeGreaterThan(examples.length / 2);
  }, 120_000);

  it('a verdict from the worker pool (too slow, failed) is below the floor whatever the policy allows', () => {
    const policy = policyOf({ match: ['ls'], decision: 'allow' });
    expect(POOL_VERDICTS.map((v) => decide(policy, 'ls', 'host:a', v))).toEqual(POOL_VERDICTS.map(() => expect.objectContaining({ decision: 'ask', rule_id: 'floor' })));
    const deny = policyOf({ match: ['ls'], decision: 'deny' });
    expect(POOL_VERDICTS.map((v) => decide(deny, 'ls', 'host:a', v).decision)).toEqual(['deny', 'deny']);
  });
});
