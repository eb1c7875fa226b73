// A rule matches a simple command the classifier judged, however it is wrapped, laid out or quoted, and only when the
// command's words start with the rule's words, whole. Generated as classes: spellings × wrappers × layouts.
import { describe, expect, it } from 'vitest';
import { judgedParts } from '../../../src/domain/risk/index.ts';
import { ruleMatches } from '../../../src/domain/policy/index.ts';
import { ALONE, BESIDE, LAYOUTS, WRAPPERS, decideOn, policyOf, variants } from './policies.ts';

const RESTART = ['systemctl', ['restart', 'reload'], 'rclone-backup'];

/** One argv, spelled with every kind of quoting and escaping the shell removes. */
const SPELLINGS = [
  'systemctl restart rclone-backup',
  `'systemctl' restart "rclone-backup"`,
  `"systemctl" "restart" 'rclone-backup'`,
  `sys"temctl" re'start' rclone""-backup`,
  '\\systemctl restart rclone\\-backup',
  'systemctl  restart\trclone-backup',
  'systemctl reload rclone-backup',
];

/** Commands that come close: another word, a longer word, a word cut short, words joined or in another order. */
const NEAR_MISSES = [
  'systemctl restart rclone-backup-other',
  'systemctl restart rclone-backupx',
  'systemctl restart rclone-backup.service',
  'systemctl restart rclone',
  'systemctl restarts rclone-backup',
  'systemctl status rclone-backup',
  'systemctl stop rclone-backup',
  'systemctl reload-or-restart rclone-backup',
  'systemctl Restart rclone-backup',
  'systemctl restart',
  'systemctl rclone-backup restart',
  'systemctlx restart rclone-backup',
  'xsystemctl restart rclone-backup',
  'systemctl --now restart rclone-backup',
];

/** A word known only at run time, where the rule's words are compared. */
const RUN_TIME = [
  'systemctl restart $UNIT',
  'systemctl restart "$UNIT"',
  'systemctl restart ${UNIT}',
  'systemctl restart rclone-$NAME',
  'systemctl restart "rclone-backup$SUFFIX"',
  'systemctl $ACTION rclone-backup',
  '$SYSTEMCTL restart rclone-backup',
  'systemctl restart "$(echo rclone-backup)"',
  'systemctl restart `echo rclone-backup`',
  'systemctl restart rclone-backup*',
];

const failures = (commands: readonly string[], ok: (command: string) => boolean): string[] => commands.filter((c) => !ok(c));

describe('a rule matches a simple command wherever the classifier finds it', () => {
  const deny = policyOf({ id: 'no-restart', match: RESTART, decision: 'deny' });

  it('through sudo, sh -c, bash -c, pct exec, qm guest exec, ssh, env, timeout, nice, pipes, lists, subshells, groups and $(…)', () => {
    const commands = variants(SPELLINGS, WRAPPERS, LAYOUTS, 6);
    expect(commands.length).toBeGreaterThan(1000);
    expect(failures(commands, (c) => {
      const d = decideOn(deny, c);
      return d.decision === 'deny' && d.rule_id === 'no-restart';
    })).toEqual([]);
  }, 120_000);

  it('only whole words, in order: no near miss is matched, however wrapped or laid out', () => {
    const commands = variants(NEAR_MISSES, WRAPPERS, LAYOUTS, 4);
    expect(commands.length).toBeGreaterThan(1000);
    expect(failures(commands, (c) => decideOn(deny, c).rule_id === 'classifier')).toEqual([]);
  }, 120_000);

  it('a word known only at run time matches no word of a rule', () => {
    const allow = policyOf({ id: 'restart', match: RESTART, decision: 'allow' });
    const commands = variants(RUN_TIME, WRAPPERS, LAYOUTS, 4);
    expect(failures(commands, (c) => decideOn(allow, c).decision !== 'allow')).toEqual([]);
  }, 120_000);

  it('words after the rule’s are not compared: the rule is a prefix, a word known at run time there included', () => {
    const allow = policyOf({ id: 'restart', match: RESTART, decision: 'allow' });
    const longer = ['systemctl restart rclone-backup --no-block', 'systemctl restart rclone-backup "$EXTRA"', 'systemctl reload rclone-backup nginx'];
    expect(longer.map((c) => decideOn(allow, c).decision)).toEqual(['allow', 'allow', 'allow']);
  });

  it('alternatives: any one of them matches, nothing else does', () => {
    const rule = { match: RESTART, decision: 'allow' as const };
    const argv = (c: string) => judgedParts(c)[0] ?? { argv: null };
    expect(['restart', 'reload'].map((w) => ruleMatches(rule, argv(`systemctl ${w} rclone-backup`)))).toEqual([true, true]);
    expect(['stop', 'restart,reload', 'reloa', 'RELOAD', ''].map((w) => ruleMatches(rule, argv(`systemctl '${w}' rclone-backup`)))).toEqual([false, false, false, false, false]);
  });

  it('ssh joins its words into one script, so quotes its local shell removes do not hide a command from a rule', () => {
    expect(decideOn(deny, 'ssh root@pve systemctl "restart rclone-backup"').decision).toBe('deny');
    expect(decideOn(deny, `ssh root@pve systemctl 'restart rclone-backup; true'`).decision).toBe('deny');
    // Run directly, the same quotes make one word, which is no word of the rule.
    expect(decideOn(deny, 'systemctl "restart rclone-backup"').rule_id).toBe('classifier');
  });

  it('an ask or deny rule also holds for the program given by its path; an allow rule only for the name', () => {
    const byPath = ['/usr/bin/systemctl restart rclone-backup', 'sudo /bin/systemctl reload rclone-backup', './systemctl restart rclone-backup'];
    expect(byPath.map((c) => decideOn(deny, c).decision)).toEqual(['deny', 'deny', 'deny']);
    const ask = policyOf({ id: 'ask-restart', match: RESTART, decision: 'ask' });
    expect(byPath.map((c) => decideOn(ask, c).rule_id)).toEqual(['ask-restart', 'ask-restart', 'ask-restart']);
    const allow = policyOf({ id: 'restart', match: RESTART, decision: 'allow' });
    expect(byPath.map((c) => decideOn(allow, c).rule_id)).toEqual(['classifier', 'classifier', 'classifier']);
  });
});

describe('an allow rule lets a covered command run', () => {
  const allow = policyOf({ id: 'restart', match: RESTART, decision: 'allow' });

  it('through every wrapper the classifier sees through, spelled and repeated every way', () => {
    const commands = variants(SPELLINGS, WRAPPERS, ALONE);
    expect(failures(commands, (c) => {
      const d = decideOn(allow, c);
      return d.decision === 'allow' && d.rule_id === 'restart';
    })).toEqual([]);
  }, 120_000);

  it('beside a part no rule covers, the classifier’s verdict on the whole command decides at least', () => {
    const commands = variants(SPELLINGS.slice(0, 2), WRAPPERS, BESIDE);
    expect(failures(commands, (c) => {
      const d = decideOn(allow, c);
      return d.decision === 'ask' && d.rule_id === 'classifier';
    })).toEqual([]);
  }, 120_000);

  it('once every other part is covered too, the whole command is allowed', () => {
    const all = policyOf(
      { id: 'restart', match: RESTART, decision: 'allow' },
      ...['true', 'false', 'echo', 'cat'].map((word) => ({ id: `allow-${word}`, match: [word], decision: 'allow' })),
    );
    expect(failures(variants(SPELLINGS.slice(0, 2)), (c) => decideOn(all, c).decision === 'allow')).toEqual([]);
  }, 120_000);
});
