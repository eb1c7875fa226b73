// The operator's policy's decision, as the session's rules obey it: allow runs at once whatever the risk class,
// deny refuses before anything else is weighed (nobody asked, no attempt counted), a rule's ask asks even inside an
// assent window, where the classifier or the floor decided the window still counts, the approval names the rule,
// a shadow decision is recorded and never obeyed, and a request from before the policy decides as it did then.
import { describe, expect, it } from 'vitest';
import type { SessionExecutionCommand } from '../../../src/domain/session/commands.ts';
import type { RiskClass, SessionEvent, Verdict } from '../../../src/domain/session/events.ts';
import { given, started } from './given.ts';

type Decided = Pick<Verdict, 'decision' | 'rule_id' | 'policy_version'>;

function request(execution_id: string, risk: RiskClass, decided: Decided, more: Partial<Extract<SessionExecutionCommand, { type: 'request_execution' }>> = {}): SessionExecutionCommand {
  return {
    type: 'request_execution',
    execution_id,
    target: 'lxc:rclone',
    command: 'systemctl restart rclone-backup',
    verdict: { risk_class: risk, reason: 'because', rule: `rule-${risk}`, inner_commands: [], ...decided },
    rules_version: '5',
    command_hash: 'h-restart',
    binding: `bind-${execution_id}`,
    known_long: false,
    approval_ttl_ms: 60_000,
    ...more,
  };
}

const assent: SessionEvent = { type: 'AssentOpened', data: { until: '2026-07-20T10:30:00.000Z', minutes: 30 } };
const types = (events: SessionEvent[]) => events.map((e) => e.type);

describe('the policy decision on request_execution', () => {
  it('runs an allowed config_mutation at once', () => {
    expect(types(given(started).when(request('e1', 'config_mutation', { decision: 'allow', rule_id: 'rclone-restart', policy_version: 3 })))).toEqual(['ExecutionRequested']);
  });

  it('refuses a denied command as policy_denied naming the rule, before the retry cap or a running twin is weighed', () => {
    const denied = { decision: 'deny', rule_id: 'no-reboot', policy_version: 2 } as const;
    const events = given(started).when(request('e1', 'reversible_low', denied));
    expect(types(events)).toEqual(['ExecutionRequested', 'ExecutionRefused']);
    expect(events[1]!.data).toMatchObject({ execution_id: 'e1', reason: 'policy_denied' });
    expect((events[1]!.data as { detail: string }).detail).toContain('no-reboot');
    // A denial is not an attempt: the retry cap does not count it.
    const history = [started, ...events, ...given(started, ...events).when(request('e2', 'reversible_low', denied))];
    const third = given(...history).when(request('e3', 'config_mutation', { decision: 'ask', rule_id: 'classifier', policy_version: 2 }));
    expect(types(third)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
  });

  it("asks where a rule says ask, even for a read and inside an assent window; the approval names the rule and version", () => {
    const ask = { decision: 'ask', rule_id: 'ask-root', policy_version: 4 } as const;
    expect(types(given(started).when(request('e1', 'reversible_low', ask)))).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    const windowed = given(started, assent).when(request('e1', 'config_mutation', ask));
    expect(types(windowed)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    expect(windowed[1]!.data).toMatchObject({ rule_id: 'ask-root', policy_version: 4 });
  });

  it('lets the assent window through where the classifier or the floor decided, and never a destructive command', () => {
    for (const rule_id of ['classifier', 'floor']) {
      expect(types(given(started, assent).when(request('e1', 'config_mutation', { decision: 'ask', rule_id, policy_version: 1 })))).toEqual(['ExecutionRequested']);
      expect(types(given(started, assent).when(request('e1', 'destructive', { decision: 'ask', rule_id, policy_version: 1 })))).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    }
  });

  it('asks for a read-only verdict the floor turned into ask', () => {
    expect(types(given(started).when(request('e1', 'reversible_low', { decision: 'ask', rule_id: 'floor', policy_version: 1 })))).toEqual(['ExecutionRequested', 'ApprovalRequested']);
  });

  it('records a shadow decision on the request and never obeys it', () => {
    const shadow = { shadow: 2, decision: 'allow', rule_id: 'candidate' } as const;
    const events = given(started).when(request('e1', 'config_mutation', { decision: 'ask', rule_id: 'classifier', policy_version: 1 }, { shadow }));
    expect(types(events)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    expect(events[0]!.data).toMatchObject({ shadow });
  });

  it('decides a request from before the policy (no decision on its verdict) by the risk class, as then', () => {
    expect(types(given(started).when(request('e1', 'reversible_low', {})))).toEqual(['ExecutionRequested']);
    const asked = given(started).when(request('e1', 'config_mutation', {}));
    expect(types(asked)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    expect(asked[1]!.data).not.toHaveProperty('rule_id');
    expect(types(given(started, assent).when(request('e1', 'config_mutation', {})))).toEqual(['ExecutionRequested']);
  });
});
