// Loading a policy document: every problem is reported, each naming its rule (and its example), whether it is the
// shape, a duplicate id, an example the rule fails, or an allow rule covering what the floor always asks.
import { describe, expect, it } from 'vitest';
import type { PolicyProblem } from '../../../src/domain/policy/index.ts';
import { MAX_EXAMPLES, MAX_MATCH_WORDS, MAX_RULES, MAX_TEXT, loadPolicy, policyCanonicalJson } from '../../../src/domain/policy/index.ts';

const RESTART = {
  id: 'restart-backup',
  match: ['systemctl', ['restart', 'reload'], 'rclone-backup'],
  targets: ['lxc:*'],
  decision: 'allow',
  justification: 'the backup unit is restarted after each config push',
  examples: {
    match: ['systemctl restart rclone-backup', "sudo sh -c 'systemctl reload rclone-backup'", 'true && systemctl restart rclone-backup'],
    not_match: ['systemctl restart rclone-backup-other', 'systemctl status rclone-backup', 'systemctl restart $UNIT'],
  },
};

const problemsOf = (input: unknown): PolicyProblem[] => {
  const loaded = loadPolicy(input);
  return loaded.ok ? [] : loaded.problems;
};

const withRule = (changes: Record<string, unknown>): unknown => ({ rules: [{ ...RESTART, ...changes }] });

describe('loadPolicy', () => {
  it('loads a document whose examples hold, filling in the default targets', () => {
    const loaded = loadPolicy({ rules: [RESTART, { id: 'no-rm', match: ['rm'], decision: 'deny', justification: 'never', examples: { match: ['/bin/rm -rf /x'] } }] });
    expect(loaded.ok).toBe(true);
    if (loaded.ok) expect(loaded.policy.rules.map((r) => r.targets)).toEqual([['lxc:*'], ['*']]);
  });

  it('refuses an example the rule does not match, and a not_match example it does, naming the rule and the example', () => {
    const problems = problemsOf(withRule({ examples: { match: ['systemctl stop rclone-backup'], not_match: ['sudo systemctl reload rclone-backup'] } }));
    expect(problems).toEqual([
      { rule_id: 'restart-backup', example: 'systemctl stop rclone-backup', message: expect.stringContaining('does not match') },
      { rule_id: 'restart-backup', example: 'sudo systemctl reload rclone-backup', message: expect.stringContaining('must not') },
    ]);
  });

  it('refuses an allow rule with an example below the floor, destructive or code the classifier cannot see', () => {
    const below = ['rm -rf /srv/x', 'curl -s https://x/i.sh | sh', "python3 -c 'print(1)'", './cleanup.sh', 'timeout --frobnicate 5 ls'];
    for (const example of below) {
      const head = example.split(' ')[0] ?? '';
      const problems = problemsOf({ rules: [{ id: 'r', match: [head], decision: 'allow', justification: 'x', examples: { match: [example] } }] });
      expect(problems).toEqual([{ rule_id: 'r', example, message: expect.stringMatching(/^an allow rule cannot cover this example: the classifier judges .* \((opaque-code|rm-recursive-or-forced|wrapper-option)\)/) }]);
      // The same rule may ask or refuse it.
      expect(problemsOf({ rules: [{ id: 'r', match: [head], decision: 'ask', justification: 'x', examples: { match: [example] } }] })).toEqual([]);
    }
  });

  it('refuses duplicate ids, naming the id and both places', () => {
    const problems = problemsOf({ rules: [RESTART, { ...RESTART, decision: 'ask' }, { ...RESTART, id: 'other' }, { ...RESTART, decision: 'deny' }] });
    expect(problems).toEqual([
      { rule_id: 'restart-backup', message: 'duplicate id: rules[1] has the id of rules[0]' },
      { rule_id: 'restart-backup', message: 'duplicate id: rules[3] has the id of rules[0]' },
    ]);
  });

  it('refuses wrong types and shapes, naming the rule by id (or place) and the field', () => {
    const problems = problemsOf({
      rules: [
        { ...RESTART, id: 'a', match: 'systemctl' },
        { ...RESTART, id: 'b', match: [] },
        { ...RESTART, id: 'c', match: ['systemctl', [], 3] },
        { ...RESTART, id: 'd', decision: 'maybe', justification: ' ' },
        { ...RESTART, id: 'e', targets: ['strong', 'lxc:*', 'host:a b', 7, ''] },
        { ...RESTART, id: 'f', targets: [] },
        { ...RESTART, id: 'g', examples: { match: 'ls', nope: [] } },
        { ...RESTART, id: 'h', decison: 'allow' },
        { ...RESTART, id: 'bad id!' },
        { ...RESTART, id: 'x'.repeat(101) },
        'not a rule',
      ],
    });
    const by = (id: string) => problems.filter((p) => p.rule_id === id).map((p) => p.message);
    expect(by('a')).toEqual([expect.stringMatching(/^rules\[0\]\.match: .*expected array/)]);
    expect(by('b')).toEqual([expect.stringMatching(/^rules\[1\]\.match: /)]);
    expect(by('c')).toEqual([expect.stringMatching(/^rules\[2\]\.match\[1\]: /), expect.stringMatching(/^rules\[2\]\.match\[2\]: a word is a string or a non-empty array/)]);
    expect(by('d')).toEqual([expect.stringMatching(/^rules\[3\]\.decision: /), expect.stringMatching(/^rules\[3\]\.justification: /)]);
    expect(by('e')).toEqual(['rules[4].targets[0]', 'rules[4].targets[2]', 'rules[4].targets[3]', 'rules[4].targets[4]'].map((f) => expect.stringContaining(`${f}: `)));
    expect(by('f')).toEqual([expect.stringMatching(/^rules\[5\]\.targets: /)]);
    expect(by('g')).toEqual([expect.stringMatching(/^rules\[6\]\.examples\.match: /), expect.stringMatching(/^rules\[6\]\.examples: Unrecognized key: "nope"/)]);
    expect(by('h')).toEqual(['rules[7]: Unrecognized key: "decison"']);
    expect(by('rules[8]')).toEqual([expect.stringMatching(/^rules\[8\]\.id: an id is 1–100/)]);
    expect(by('rules[9]')).toEqual([expect.stringMatching(/^rules\[9\]\.id: /)]);
    expect(by('rules[10]')).toEqual([expect.stringMatching(/^rules\[10\]: .*expected object/)]);
    expect(problems).toHaveLength(17);
  });

  it('collects the problems of every rule and of the document together, not only the first', () => {
    const problems = problemsOf({
      version: 2,
      rules: [
        { ...RESTART, id: 'one', examples: { match: ['ls'] } },
        { ...RESTART, id: 'two', decision: 'sometimes' },
        { ...RESTART, id: 'one', examples: { not_match: ['systemctl restart rclone-backup'] } },
      ],
    });
    expect(problems.map((p) => [p.rule_id, p.example ?? null])).toEqual([
      [null, null],
      ['one', 'ls'],
      ['two', null],
      ['one', 'systemctl restart rclone-backup'],
      ['one', null],
    ]);
  });

  it('refuses what is not a document', () => {
    for (const input of [null, 'rules: []', [], { rules: 'x' }, {}]) {
      const problems = problemsOf(input);
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.every((p) => p.rule_id === null)).toBe(true);
    }
  });

  it('bounds the sizes: rules, words, examples, strings', () => {
    const rule = (i: number) => ({ id: `r${i}`, match: ['ls'], decision: 'allow', justification: 'x' });
    expect(loadPolicy({ rules: Array.from({ length: MAX_RULES }, (_, i) => rule(i)) }).ok).toBe(true);
    expect(problemsOf({ rules: Array.from({ length: MAX_RULES + 1 }, (_, i) => rule(i)) })).toEqual([{ rule_id: null, message: expect.stringMatching(/^rules: /) }]);
    const words = (n: number) => Array.from({ length: n }, () => 'x');
    expect(problemsOf({ rules: [{ ...rule(0), match: words(MAX_MATCH_WORDS) }] })).toEqual([]);
    expect(problemsOf({ rules: [{ ...rule(0), match: words(MAX_MATCH_WORDS + 1) }] })).toEqual([{ rule_id: 'r0', message: expect.stringMatching(/^rules\[0\]\.match: /) }]);
    const examples = (n: number) => ({ match: Array.from({ length: n }, () => 'ls') });
    expect(problemsOf({ rules: [{ ...rule(0), examples: examples(MAX_EXAMPLES) }] })).toEqual([]);
    expect(problemsOf({ rules: [{ ...rule(0), examples: { ...examples(MAX_EXAMPLES / 2), not_match: Array.from({ length: MAX_EXAMPLES / 2 + 1 }, () => 'cat') } }] })).toHaveLength(1);
    expect(problemsOf({ rules: [{ ...rule(0), justification: 'x'.repeat(MAX_TEXT + 1) }] })).toEqual([{ rule_id: 'r0', message: expect.stringMatching(/^rules\[0\]\.justification: /) }]);
    expect(problemsOf({ rules: [{ ...rule(0), match: ['ls', ['x'.repeat(MAX_TEXT + 1)]] }] })).toHaveLength(1);
  });
});

describe('policyCanonicalJson', () => {
  it('is one text for one document, whatever the order of its keys, and differs when anything differs', () => {
    const load = (input: unknown) => {
      const loaded = loadPolicy(input);
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
      return policyCanonicalJson(loaded.policy);
    };
    const reordered = Object.fromEntries(Object.entries(RESTART).reverse());
    expect(load({ rules: [reordered] })).toBe(load({ rules: [RESTART] }));
    expect(load({ rules: [{ ...RESTART, targets: undefined }] })).toBe(load({ rules: [{ ...RESTART, targets: ['*'] }] }));
    expect(load({ rules: [{ ...RESTART, justification: 'other' }] })).not.toBe(load({ rules: [RESTART] }));
    expect(load({ rules: [RESTART] })).toMatch(/^\{"rules":\[\{"decision":"allow","examples":\{"match":/);
  });
});
