// The what-if's pure core: groups of past executions decided under the policy in force then and under a candidate,
// counted per change over a policy change mid-history; the floor holding under a candidate's allow; the newly allowed
// ones an operator denied or whose run failed flagged; samples newest first across groups, bounded, the same whatever
// order the groups come in; and the picked executions filled in from the read model.
import { describe, expect, it } from 'vitest';
import { type CommandJudgement, type ExecutionDetail, type ReplayGroup, changeOf, judge, pickedIds, planWhatIf, whatIfResult } from '../../../src/domain/policy/index.ts';
import { policyOf } from './policies.ts';

const RESTART = 'systemctl restart rclone-backup';
const STATUS = 'systemctl status rclone-backup';
const WIPE = 'rm -rf /var/cache/jellyfin';
const REBOOT = 'sudo reboot';

const judged = (...commands: string[]): Map<string, CommandJudgement> =>
  new Map(commands.map((command) => {
    const { verdict, parts = [] } = judge({ command, parts: true });
    return [command, { verdict, parts }];
  }));
const JUDGED = judged(RESTART, STATUS, WIPE, REBOOT);

const ALLOW_RESTART = policyOf({ id: 'restart', match: ['systemctl', 'restart', 'rclone-backup'], decision: 'allow' });
const ALLOW_RM = policyOf({ id: 'rm-anything', match: ['rm'], decision: 'allow' });
const DENY_REBOOT = policyOf({ id: 'no-reboot', match: ['reboot'], decision: 'deny' });

let nextPosition = 0;
/** A group of `count` executions with made-up positions (each group's newer than the last built), `denied` and `failed` of them so. */
function group(command: string, epoch: number, count: number, more: { target?: string; denied?: number; failed?: number; day?: number } = {}): ReplayGroup {
  const refs = Array.from({ length: count }, (_, i) => ({ id: `${command.split(' ')[0]}-${epoch}-${nextPosition}-${i}`, position: nextPosition + count - i }));
  nextPosition += count + 1;
  const day = String(more.day ?? 1).padStart(2, '0');
  return {
    command,
    target: more.target ?? 'lxc:rclone',
    epoch,
    count,
    denied: more.denied ?? 0,
    failed: more.failed ?? 0,
    firstAt: `2026-11-${day}T08:00:00.000Z`,
    lastAt: `2026-11-${day}T18:00:00.000Z`,
    recent: refs,
    recentDenied: refs.slice(0, more.denied ?? 0),
    recentFailed: refs.slice(more.denied ?? 0, (more.denied ?? 0) + (more.failed ?? 0)),
  };
}

const NO_POLICY = [{ version: 0, policy: null }];

describe('the change of one execution', () => {
  it('is unchanged when both decide alike, otherwise named for what the candidate decides', () => {
    expect(changeOf('ask', 'ask')).toBe('unchanged');
    expect(changeOf('ask', 'allow')).toBe('newly_allowed');
    expect(changeOf('deny', 'allow')).toBe('newly_allowed');
    expect(changeOf('allow', 'ask')).toBe('newly_asked');
    expect(changeOf('deny', 'ask')).toBe('newly_asked');
    expect(changeOf('ask', 'deny')).toBe('newly_denied');
  });
});

describe('planWhatIf', () => {
  it('answers nothing replayed, no period, when there is no history', () => {
    const plan = planWhatIf({ groups: [], judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RESTART });
    expect(plan).toMatchObject({ replayed: 0, from: null, to: null, commands: 0, changes: { unchanged: 0, newly_allowed: 0, newly_asked: 0, newly_denied: 0 } });
  });

  it('decides each execution under the version in force when it was requested: a change mid-history counts only before it', () => {
    // Version 1 allowed the restart from the middle of history; the candidate allows it too.
    const policiesThen = [...NO_POLICY, { version: 1, policy: ALLOW_RESTART }];
    const before = group(RESTART, 0, 7, { day: 1 });
    const after = group(RESTART, 1, 5, { day: 20 });
    const reads = group(STATUS, 0, 4, { day: 2 });
    const plan = planWhatIf({ groups: [before, after, reads], judgements: JUDGED, policiesThen, candidate: ALLOW_RESTART });
    expect(plan.replayed).toBe(16);
    expect(plan.commands).toBe(2);
    expect(plan.from).toBe('2026-11-01T08:00:00.000Z');
    expect(plan.to).toBe('2026-11-20T18:00:00.000Z');
    expect(plan.changes).toEqual({ unchanged: 9, newly_allowed: 7, newly_asked: 0, newly_denied: 0 });
    expect(plan.picks.newly_allowed.map((p) => p.ref.id)).toEqual(before.recent.map((r) => r.id));
    expect(plan.picks.newly_allowed[0]).toMatchObject({ decisionThen: 'ask', decisionNow: 'allow', ruleId: 'restart', policyVersionThen: 0 });

    // Dropping the rule: what version 1 let through is asked again; what ran before it was asked then too.
    const dropped = planWhatIf({ groups: [before, after, reads], judgements: JUDGED, policiesThen, candidate: policyOf({ id: 'other', match: ['pct', 'list'], decision: 'allow' }) });
    expect(dropped.changes).toEqual({ unchanged: 11, newly_allowed: 0, newly_asked: 5, newly_denied: 0 });
    expect(dropped.picks.newly_asked[0]).toMatchObject({ decisionThen: 'allow', decisionNow: 'ask', ruleId: 'classifier', policyVersionThen: 1 });
  });

  it('counts a rule that denies, and never lets an allow below the floor', () => {
    const groups = [group(REBOOT, 0, 3), group(WIPE, 0, 2, { denied: 1 })];
    expect(planWhatIf({ groups, judgements: JUDGED, policiesThen: NO_POLICY, candidate: DENY_REBOOT }).changes).toEqual({ unchanged: 2, newly_allowed: 0, newly_asked: 0, newly_denied: 3 });
    const floor = planWhatIf({ groups, judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RM });
    expect(floor.changes).toEqual({ unchanged: 5, newly_allowed: 0, newly_asked: 0, newly_denied: 0 });
    expect(floor.flagged).toEqual({ allowed_once_denied: 0, allowed_once_failed: 0 });
  });

  it('flags the newly allowed that an operator denied or whose run failed, and only those', () => {
    const restart = group(RESTART, 0, 10, { denied: 2, failed: 3 });
    const rebootDenied = group(REBOOT, 0, 4, { denied: 4 });
    const plan = planWhatIf({ groups: [restart, rebootDenied], judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RESTART });
    expect(plan.flagged).toEqual({ allowed_once_denied: 2, allowed_once_failed: 3 });
    expect(plan.picks.allowed_once_denied.map((p) => p.ref.id)).toEqual(restart.recentDenied.map((r) => r.id));
    expect(plan.picks.allowed_once_failed.map((p) => p.ref.id)).toEqual(restart.recentFailed.map((r) => r.id));
  });

  it('lists the newest of each change across groups, bounded, the same whatever order the groups come in', () => {
    const groups = ['lxc:a', 'lxc:b', 'lxc:c', 'host:strong'].map((target) => group(RESTART, 0, 8, { target, denied: 3, failed: 2 }));
    const limits = { samples: 5, flagged: 4 };
    const plan = planWhatIf({ groups, judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RESTART, limits });
    const positions = plan.picks.newly_allowed.map((p) => p.ref.position);
    expect(positions).toHaveLength(5);
    expect(positions).toEqual([...positions].sort((a, b) => b - a));
    expect(positions[0]).toBe(Math.max(...groups.flatMap((g) => g.recent.map((r) => r.position))));
    expect(plan.picks.allowed_once_denied).toHaveLength(4);
    expect(plan.flagged).toEqual({ allowed_once_denied: 12, allowed_once_failed: 8 });
    const shuffled = planWhatIf({ groups: [groups[2]!, groups[0]!, groups[3]!, groups[1]!], judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RESTART, limits });
    expect(shuffled).toEqual(plan);
  });

  it('refuses to plan a command it was given no judgement for', () => {
    expect(() => planWhatIf({ groups: [group('uptime', 0, 1)], judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RESTART })).toThrow(/no judgement/);
  });
});

describe('whatIfResult', () => {
  it('fills each picked execution in from the read model, leaving out one it no longer has', () => {
    const restart = group(RESTART, 0, 3, { denied: 1, failed: 1 });
    const plan = planWhatIf({ groups: [restart], judgements: JUDGED, policiesThen: NO_POLICY, candidate: ALLOW_RESTART });
    const ids = pickedIds(plan);
    expect(ids).toEqual(restart.recent.map((r) => r.id));
    const detail = (id: string, outcome: string, decided_by: ExecutionDetail['decided_by']): [string, ExecutionDetail] => [
      id,
      { session_id: 's-1', target: 'lxc:rclone', command: RESTART, at: '2026-11-01T09:00:00.000Z', decided_by, outcome },
    ];
    const alice = { role: 'operator' as const, id: 'alice' };
    const details = new Map([detail(ids[0]!, 'denied', alice), detail(ids[1]!, 'failed', alice)]);
    const result = whatIfResult(plan, details);
    expect(result.samples.newly_allowed).toEqual([
      { session_id: 's-1', target: 'lxc:rclone', command: RESTART, at: '2026-11-01T09:00:00.000Z', decided_by: alice, outcome: 'denied', execution_id: ids[0], decision_then: 'ask', decision_now: 'allow', rule_id: 'restart', policy_version_then: 0 },
      expect.objectContaining({ execution_id: ids[1], outcome: 'failed' }),
    ]);
    expect(result.flags.allowed_once_denied.map((s) => s.execution_id)).toEqual([ids[0]]);
    expect(result.flags.allowed_once_failed.map((s) => s.execution_id)).toEqual([ids[1]]);
    expect(result.flag_counts).toEqual({ allowed_once_denied: 1, allowed_once_failed: 1 });
    expect(result).toMatchObject({ replayed: 3, changes: { newly_allowed: 3 }, samples: { newly_asked: [], newly_denied: [] } });
  });
});
