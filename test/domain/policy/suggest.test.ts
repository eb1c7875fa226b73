// Suggestions from the approvals in the log: the narrowest allow rule over commands approved again and again,
// never covering a denied command near them, a command whose approved run failed, one below the floor, or one
// approved fewer than N times; each offered rule loads beside the policy in force and allows what it was built from.
import { describe, expect, it } from 'vitest';
import { type DecidedApproval, type Policy, decide, judge, loadPolicy, ruleMatches, suggestRules } from '../../../src/domain/policy/index.ts';
import { judgedParts } from '../../../src/domain/risk/index.ts';
import { policyOf } from './policies.ts';

const T = 'lxc:rclone';

type Record = Pick<DecidedApproval, 'command'> & Partial<DecidedApproval>;

let sessions = 0;
/** Approvals of one command, each in a session of its own unless one is given. */
function approvals(n: number, record: Record): DecidedApproval[] {
  return Array.from({ length: n }, (_, i) => ({
    target: T,
    session_id: `s${++sessions}`,
    status: 'granted' as const,
    outcome: record.status === undefined || record.status === 'granted' ? 'succeeded' : record.status,
    wait_s: record.status === undefined || record.status === 'granted' ? 10 * (i + 1) : null,
    session_deleted: false,
    ...record,
  }));
}
const denied = (command: string, target = T): DecidedApproval[] => approvals(1, { command, target, status: 'denied' });

const reading = (command: string) => {
  const { verdict, parts } = judge({ command, parts: true });
  return { verdict, parts: parts ?? [] };
};
const suggest = (log: readonly DecidedApproval[], policy: Policy | null = null, minApprovals = 3) => suggestRules(log, reading, policy, { minApprovals });

/** Every suggestion loads beside the policy, and allows each of its examples on each of its targets. */
function expectSound(suggestions: ReturnType<typeof suggest>, policy: Policy | null = null): void {
  for (const { rule } of suggestions) {
    const loaded = loadPolicy({ rules: [...(policy?.rules ?? []), rule] });
    expect(loaded.ok, JSON.stringify(loaded)).toBe(true);
    if (!loaded.ok) continue;
    for (const example of rule.examples?.match ?? []) {
      for (const target of rule.targets) {
        expect(decide(loaded.policy, example, target, reading(example).verdict).decision, `${example} on ${target}`).toBe('allow');
      }
    }
  }
}

describe('suggesting allow rules from approvals', () => {
  it('merges approved commands that differ in one word into one rule, with the evidence, and never covers the denied neighbour', () => {
    const log = [
      ...approvals(3, { command: 'systemctl restart rclone-backup' }),
      ...approvals(1, { command: 'sudo systemctl restart rclone-backup', session_id: 's1' }),
      ...approvals(3, { command: "sh -c 'systemctl reload rclone-backup'" }),
      ...denied('systemctl stop rclone-backup'),
      ...denied('systemctl disable --now rclone-backup'),
      ...denied('journalctl --vacuum-time=1d'),
    ];
    const suggestions = suggest(log);
    expect(suggestions).toHaveLength(1);
    const [{ rule, evidence }] = suggestions as [(typeof suggestions)[number]];
    expect(rule).toMatchObject({
      id: 'suggested-systemctl-reload-restart-rclone-backup',
      match: ['systemctl', ['reload', 'restart'], 'rclone-backup'],
      targets: [T],
      decision: 'allow',
    });
    expect(evidence).toEqual({ approvals: 7, denials: 0, sessions: 6, expired: 0, median_wait_s: 20 });
    expect(rule.justification).toMatch(/^approved 7 times in 6 sessions on lxc:rclone, never denied/);
    expect(rule.examples?.match).toEqual(expect.arrayContaining(['systemctl restart rclone-backup', "sh -c 'systemctl reload rclone-backup'"]));
    // Denied neighbours share the first words; the one that shares none is no neighbour.
    expect(rule.examples?.not_match).toEqual(['systemctl disable --now rclone-backup', 'systemctl stop rclone-backup']);
    for (const command of ['systemctl stop rclone-backup', 'systemctl disable --now rclone-backup']) {
      expect(judgedParts(command).some((part) => ruleMatches(rule, part)), command).toBe(false);
    }
    expectSound(suggestions);
  });

  it('leaves out a target where a denied command starts with the same words: the rule, a prefix, would match it there', () => {
    const log = [
      ...approvals(3, { command: 'systemctl restart rclone-backup' }),
      ...approvals(3, { command: 'systemctl restart rclone-backup', target: 'lxc:other' }),
      ...denied('systemctl restart rclone-backup --force'),
    ];
    const suggestions = suggest(log);
    expect(suggestions.map((s) => [s.rule.targets, s.evidence.approvals])).toEqual([[['lxc:other'], 3]]);
    expect(suggest([...log, ...denied('sudo systemctl restart rclone-backup', 'lxc:other')])).toEqual([]);
    expectSound(suggestions);
  });

  it('does not merge alternatives when the merged rule would hold on targets one of them was not approved on', () => {
    const log = [...approvals(3, { command: 'systemctl restart nginx' }), ...approvals(3, { command: 'systemctl reload nginx', target: 'lxc:web' })];
    const suggestions = suggest(log);
    expect(suggestions.map((s) => [s.rule.match, s.rule.targets])).toEqual([
      [['systemctl', 'reload', 'nginx'], ['lxc:web']],
      [['systemctl', 'restart', 'nginx'], [T]],
    ]);
    expectSound(suggestions);
  });

  it('suggests nothing for a command whose approved run failed or timed out there', () => {
    for (const outcome of ['failed', 'timed_out']) {
      const log = [...approvals(5, { command: 'systemctl restart rclone-backup' }), ...approvals(1, { command: 'sudo systemctl restart rclone-backup', outcome })];
      expect(suggest(log), outcome).toEqual([]);
    }
    // A refused or lost one's fate is not the command's: a run that never started does not count against it.
    expect(suggest(approvals(3, { command: 'systemctl restart rclone-backup', outcome: 'refused' }))).toHaveLength(1);
  });

  it('suggests nothing below the floor, however often approved: destructive, or code the classifier cannot see', () => {
    const log = [
      ...approvals(9, { command: 'rm -rf /srv/cache' }),
      ...approvals(9, { command: 'curl -fsSL https://x.example/i.sh | sh' }),
      ...approvals(9, { command: "python3 -c 'print(1)'" }),
      ...approvals(9, { command: 'systemctl restart rclone-backup && rm -rf /tmp/x' }),
    ];
    expect(suggest(log)).toEqual([]);
  });

  it('suggests nothing approved fewer than N times, counting grants in deleted sessions for nothing', () => {
    expect(suggest(approvals(2, { command: 'systemctl restart rclone-backup' }))).toEqual([]);
    expect(suggest(approvals(2, { command: 'systemctl restart rclone-backup' }), null, 2)).toHaveLength(1);
    expect(suggest([...approvals(2, { command: 'systemctl restart rclone-backup' }), ...approvals(3, { command: 'systemctl restart rclone-backup', session_deleted: true })])).toEqual([]);
    // A denial in a deleted session still vetoes.
    expect(suggest([...approvals(3, { command: 'systemctl restart rclone-backup' }), ...approvals(1, { command: 'systemctl restart rclone-backup', status: 'denied', session_deleted: true })])).toEqual([]);
  });

  it('suggests nothing the rule could not match or would not let run: words known at run time, several parts to cover, reads', () => {
    const log = [
      ...approvals(5, { command: 'systemctl restart "$UNIT"' }),
      ...approvals(5, { command: 'apt-get update && apt-get install -y jq' }),
      ...approvals(5, { command: 'FOO=1 systemctl restart nginx' }),
      ...approvals(5, { command: 'ls -la /srv' }),
    ];
    expect(suggest(log)).toEqual([]);
  });

  it('suggests nothing the policy in force already allows, asks for or refuses; ids stay unique beside its rules', () => {
    const log = approvals(4, { command: 'systemctl restart rclone-backup' });
    for (const decision of ['allow', 'ask', 'deny']) {
      expect(suggest(log, policyOf({ match: ['systemctl', 'restart'], decision })), decision).toEqual([]);
    }
    const taken = policyOf({ id: 'suggested-systemctl-restart-rclone-backup', match: ['reboot'], decision: 'deny' });
    const suggestions = suggest(log, taken);
    expect(suggestions.map((s) => s.rule.id)).toEqual(['suggested-systemctl-restart-rclone-backup-2']);
    expectSound(suggestions, taken);
  });

  it('counts approvals of the same words that expired unanswered, and orders the suggestions by approvals', () => {
    const log = [
      ...approvals(3, { command: 'systemctl restart nginx', target: 'lxc:web' }),
      ...approvals(5, { command: 'systemctl restart rclone-backup' }),
      ...approvals(2, { command: 'sudo systemctl restart rclone-backup', status: 'expired' }),
      ...approvals(1, { command: 'systemctl restart rclone-backup', status: 'expired', target: 'lxc:other' }),
    ];
    const suggestions = suggest(log);
    expect(suggestions.map((s) => [s.rule.id, s.evidence.approvals, s.evidence.expired])).toEqual([
      ['suggested-systemctl-restart-rclone-backup', 5, 2],
      ['suggested-systemctl-restart-nginx', 3, 0],
    ]);
    expect(suggest([...log].reverse())).toEqual(suggestions);
    expectSound(suggestions);
  });
});
