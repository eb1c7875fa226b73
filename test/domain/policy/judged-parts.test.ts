// judgedParts is the classifier's own walk: over every rule's examples, its parts make up the verdict exactly (the
// most severe part's class and rule), and its simple commands are the verdict's inner commands.
import { describe, expect, it } from 'vitest';
import type { RiskClass } from '../../../src/domain/risk/index.ts';
import { RISK_CLASSES, RULES, classify, judgedParts } from '../../../src/domain/risk/index.ts';

const severity = (risk: RiskClass): number => RISK_CLASSES.indexOf(risk);
const EXAMPLES = [...new Set(RULES.flatMap((r) => r.examples))];

describe('judgedParts', () => {
  it('gives the parts the verdict is the most severe of, for every rule example', () => {
    expect(EXAMPLES.length).toBeGreaterThan(500);
    const disagree = EXAMPLES.filter((command) => {
      const verdict = classify(command);
      const parts = judgedParts(command);
      const worst = parts.reduce((max, p) => Math.max(max, severity(p.risk_class)), severity('reversible_low'));
      const commands = parts.filter((p) => p.argv !== null).map((p) => p.text);
      const decisive = parts.length === 0 || parts.some((p) => p.rule === verdict.rule && p.risk_class === verdict.risk_class);
      return worst !== severity(verdict.risk_class) || !decisive || JSON.stringify(commands) !== JSON.stringify(verdict.inner_commands);
    });
    expect(disagree).toEqual([]);
  }, 120_000);

  it.each([
    ["sudo sh -c 'systemctl restart \"rclone-backup\"'", [['systemctl', 'restart', 'rclone-backup']]],
    ['pct exec 101 -- ssh root@x "ls /srv | wc -l"', [['ls', '/srv'], ['wc', '-l']]],
    ['echo "$(date)" > /etc/motd', [null, ['echo', null], ['date']]],
    ['systemctl restart $UNIT', [['systemctl', 'restart', null]]],
    ['$CMD x', [[null, 'x']]],
    ["echo 'unterminated", [null]],
    ['X=1', [null]],
    ['', []],
  ])('%j → argv %j', (command, argvs) => {
    expect(judgedParts(command).map((p) => p.argv)).toEqual(argvs);
  });
});
