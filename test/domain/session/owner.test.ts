// Sessions have owners: an agent writes only to a session it owns, operators anywhere, an operator hands a session
// over, and an assent window is granted to one named actor — given events → when command → then events (or error).
import { describe, expect, it } from 'vitest';
import { type Actor, type CommandMetadata, Forbidden, RuleViolation } from '../../../src/domain/messages.ts';
import { decide, type SessionCommandInput } from '../../../src/domain/session/decide.ts';
import type { RiskClass, SessionEvent } from '../../../src/domain/session/events.ts';
import { approvalRequested, fold, meta } from './given.ts';

const alice: Actor = { role: 'operator', id: 'alice' };
const bot: Actor = { role: 'agent', id: 'bot' };
const other: Actor = { role: 'agent', id: 'other' };
const executor: Actor = { role: 'system', id: 'executor' };

const as = (actor: Actor, extra: Partial<CommandMetadata> = {}): CommandMetadata => ({ ...meta, actor, ...extra });
const startedBy = (owner?: Actor): SessionEvent => ({ type: 'SessionStarted', data: { session_id: 's-1', ...(owner && { owner }) } });
const handedOver = (from: Actor, to: Actor): SessionEvent => ({ type: 'SessionHandedOver', data: { from, to } });
const assent = (grantee?: Actor): SessionEvent => ({ type: 'AssentOpened', data: { until: '2026-07-20T10:30:00.000Z', minutes: 30, ...(grantee && { for: grantee }) } });

function run(risk: RiskClass): SessionCommandInput {
  return {
    type: 'request_execution',
    execution_id: 'e1',
    target: 'host:strong',
    command: 'chmod 600 /tmp/x',
    verdict: { risk_class: risk, reason: 'because', rule: `rule-${risk}`, inner_commands: ['chmod 600 /tmp/x'] },
    rules_version: '1',
    command_hash: 'h',
    binding: 'b',
    known_long: false,
    approval_ttl_ms: 60_000,
  };
}

const when = (events: SessionEvent[], command: SessionCommandInput, m: CommandMetadata) => decide(command, fold(...events), m);

function forbidden(attempt: () => unknown): Forbidden {
  try {
    attempt();
  } catch (error) {
    if (error instanceof Forbidden) return error;
    throw error;
  }
  throw new Error('expected the command to be refused as forbidden');
}

describe('session owner', () => {
  it('is whoever started the session', () => {
    expect(decide({ type: 'start_session', session_id: 's-1' }, fold(), as(bot))).toEqual([startedBy(bot)]);
    expect(fold(startedBy(alice)).owner).toEqual(alice);
  });

  it("refuses every command of an agent to another's session, naming the owner", () => {
    const commands: SessionCommandInput[] = [
      { type: 'post_user_message', text: 'hi' },
      { type: 'set_goal', goal: 'take over' },
      { type: 'record_tool_call_requested', tool_call_id: 't1', name: 'run', args: {} },
      { type: 'complete_task', outcome: 'success', summary: 'done' },
      run('reversible_low'),
      { type: 'start_turn', turn_id: 't', trigger: 'continue' },
    ];
    for (const command of commands) {
      const error = forbidden(() => when([startedBy(alice)], command, as(bot)));
      expect(error.code).toBe('not_session_owner');
      expect(error.message).toContain('operator:alice');
      expect(error.message).toContain('agent:bot');
    }
    // Another agent's session is as closed to it as an operator's.
    expect(forbidden(() => when([startedBy(other)], { type: 'post_user_message', text: 'hi' }, as(bot))).message).toContain('agent:other');
  });

  it("refuses an agent's complete_task that would cancel the owner's pending approval", () => {
    expect(forbidden(() => when([startedBy(alice), approvalRequested('ap-1')], { type: 'complete_task', outcome: 'partial', summary: 'x' }, as(bot))).code).toBe('not_session_owner');
  });

  it('lets the owning agent, operators and the system write', () => {
    expect(when([startedBy(bot)], { type: 'post_user_message', text: 'hi' }, as(bot)).map((e) => e.type)).toEqual(['UserMessagePosted']);
    expect(when([startedBy(bot)], { type: 'post_user_message', text: 'hi' }, as(alice)).map((e) => e.type)).toEqual(['UserMessagePosted']);
    expect(when([startedBy(alice), ...when([startedBy(alice)], run('reversible_low'), as(alice))], { type: 'start_execution', execution_id: 'e1', binding: 'b' }, as(executor)).map((e) => e.type)).toEqual(['ExecutionStarted']);
  });

  it("lets the server's own agent loop write for the owner", () => {
    expect(when([startedBy(alice)], { type: 'record_assistant_message', text: 'ok' }, as({ role: 'agent', id: 'nomos' }, { actsForOwner: true })).map((e) => e.type)).toEqual(['AssistantMessageRecorded']);
  });

  it('refuses an agent when the owner is unknown', () => {
    expect(forbidden(() => when([startedBy()], { type: 'post_user_message', text: 'hi' }, as(bot))).message).toContain('an unknown principal');
  });
});

describe('hand_over', () => {
  it('gives the session to an agent, who may then write to it, and the previous agent no longer', () => {
    const events = when([startedBy(other)], { type: 'hand_over', to: bot }, as(alice));
    expect(events).toEqual([handedOver(other, bot)]);
    const history = [startedBy(other), ...events];
    expect(when(history, { type: 'post_user_message', text: 'mine now' }, as(bot)).map((e) => e.type)).toEqual(['UserMessagePosted']);
    expect(forbidden(() => when(history, { type: 'post_user_message', text: 'still mine?' }, as(other))).message).toContain('agent:bot');
  });

  it('is for operators only, and refuses a hand-over to the owner', () => {
    expect(forbidden(() => when([startedBy(bot)], { type: 'hand_over', to: other }, as(bot))).code).toBe('forbidden');
    expect(() => when([startedBy(alice)], { type: 'hand_over', to: alice }, as(alice))).toThrow(RuleViolation);
  });
});

describe('assent window for a named actor', () => {
  it("is granted to the session's owner by default, or to whom the operator names", () => {
    expect(when([startedBy(bot)], { type: 'open_assent', minutes: 30 }, as(alice))).toEqual([assent(bot)]);
    expect(when([startedBy(alice)], { type: 'open_assent', minutes: 30, for: bot }, as(alice))).toEqual([assent(bot)]);
  });

  it('runs a config_mutation at once only for its grantee', () => {
    const history = [startedBy(alice), handedOver(alice, bot), assent(alice)];
    // The window is alice's: the agent that now owns the session still asks.
    expect(when(history, run('config_mutation'), as(bot)).map((e) => e.type)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
    expect(when(history, run('config_mutation'), as(alice)).map((e) => e.type)).toEqual(['ExecutionRequested']);
    expect(when([startedBy(alice), assent(bot)], run('config_mutation'), as(alice)).map((e) => e.type)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
  });

  it("covers the server's own agent loop when granted to the owner", () => {
    const loop = as({ role: 'agent', id: 'nomos' }, { actsForOwner: true });
    expect(when([startedBy(alice), assent(alice)], run('config_mutation'), loop).map((e) => e.type)).toEqual(['ExecutionRequested']);
    expect(when([startedBy(alice), assent(bot)], run('config_mutation'), loop).map((e) => e.type)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
  });

  it('belongs to the owner at the time of the grant when an older event names nobody', () => {
    const history = [startedBy(alice), assent(), handedOver(alice, bot)];
    expect(fold(...history).assentFor).toEqual(alice);
    expect(when(history, run('config_mutation'), as(bot)).map((e) => e.type)).toEqual(['ExecutionRequested', 'ApprovalRequested']);
  });
});
