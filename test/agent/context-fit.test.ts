// The context fitted to a token budget: untouched when it fits; else the oldest results elided to stubs that
// name get_tool_result, then the oldest turns folded into a digest, the goals, the plan and the latest turn kept
// whole, and always a chat the API accepts. The same events and budget give the same messages.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fitModelMessages, type ContextFit } from '../../src/agent/context-fit.ts';
import { buildModelMessages } from '../../src/agent/context.ts';
import { countPromptTokens } from '../../src/agent/tokens.ts';
import { toolDefinitions } from '../../src/agent/tools.ts';
import type { SessionEvent } from '../../src/domain/session/events.ts';
import type { LlmMessage } from '../../src/ports/llm.ts';

const ev = <T extends SessionEvent['type']>(type: T, data: Extract<SessionEvent, { type: T }>['data']) => ({ type, data }) as SessionEvent;

const SYSTEM = `${readFileSync(new URL('../../prompts/system.md', import.meta.url), 'utf8')}\n\nFleet: host:strong (Proxmox), lxc:rclone, vm:zimaos.`;
const TOOLS = toolDefinitions();
const GOAL = 'Find out why the nightly rclone backup of lxc:rclone fails and make it succeed again';
const VERDICT = { risk_class: 'reversible_low' as const, reason: 'read-only', rule: 'journalctl', inner_commands: [] };

/** About `bytes` of journal lines, the same for the same seed. */
function journal(seed: number, bytes: number): string {
  let x = (seed * 2654435761) % 2 ** 32;
  const next = () => (x = (x * 1664525 + 1013904223) % 2 ** 32);
  const lines: string[] = [];
  for (let size = 0; size < bytes; size += (lines.at(-1)?.length ?? 0) + 1) {
    lines.push(`Jan ${1 + (next() % 28)} 03:${String(next() % 60).padStart(2, '0')} rclone rclone[${next() % 30000}]: INFO  : photos/${2019 + (next() % 7)}/IMG_${next() % 10000}.jpg: Copied (new) ${(next() % 900) / 10} MiB/s`);
  }
  return lines.join('\n').slice(0, bytes);
}

/**
 * A session as the agent records it: turns of run calls, each with its execution's events and a result shaped
 * like run's reply (3 KiB of output); every tenth fails. The goal and plan are set in the first turn; the last
 * turn is still running.
 */
function session(turnSizes: readonly number[]): SessionEvent[] {
  const events: SessionEvent[] = [ev('SessionStarted', { session_id: 's' })];
  let n = 0;
  turnSizes.forEach((calls, turn) => {
    events.push(ev('UserMessagePosted', { message_id: `u${turn}`, text: turn === 0 ? 'The nightly backup failed again. Fix it.' : 'Go on.' }));
    events.push(ev('TurnStarted', { turn_id: `t${turn}`, trigger: 'user_message' }));
    if (turn === 0) {
      events.push(ev('ToolCallRequested', { tool_call_id: 'goal', message_id: 'a0', name: 'set_goal', args: { goal: GOAL } }));
      events.push(ev('GoalSet', { goal_id: 'g1', goal: GOAL, title: GOAL }));
      events.push(ev('ToolCallCompleted', { tool_call_id: 'goal', result: { session_id: 's', position: 3 }, error: null, result_original_bytes: null }));
      events.push(ev('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'Read the logs' }, { seq: 2, title: 'Fix the mount' }, { seq: 3, title: 'Run the backup' }] }));
      events.push(ev('PlanStepUpdated', { generation: 1, seq: 1, from: 'pending', status: 'running', closed_by_task: false }));
    }
    for (let c = 0; c < calls; c++, n++) {
      const [id, target, command, stdout] = [`e${n}`, n % 3 === 0 ? 'host:strong' : 'lxc:rclone', `journalctl -u rclone-sync --since -${n + 1}h --no-pager | tail -n 40`, journal(n, 3 * 1024)];
      const failed = n % 10 === 9;
      const stderr = failed ? 'permission denied' : '';
      events.push(ev('ToolCallRequested', { tool_call_id: `call-${n}`, message_id: `a${turn}`, name: 'run', args: { target, command } }));
      events.push(ev('ExecutionRequested', { execution_id: id, target, command, verdict: VERDICT, rules_version: '1', command_hash: `h${n}`, binding: `b${n}`, known_long: false }));
      events.push(ev('ExecutionStarted', { execution_id: id }));
      events.push(
        failed
          ? ev('ExecutionFailed', { execution_id: id, exit_code: 1, signal: null, error: null, stdout_tail: stdout, stderr_tail: stderr, duration_ms: 40 })
          : ev('ExecutionSucceeded', { execution_id: id, exit_code: 0, stdout_tail: stdout, stderr_tail: stderr, duration_ms: 40 }),
      );
      const result = { execution_id: id, target, verdict: VERDICT, position: events.length, status: failed ? 'failed' : 'succeeded', exit_code: failed ? 1 : 0, stdout, stderr };
      events.push(ev('ToolCallCompleted', { tool_call_id: `call-${n}`, result, error: null, result_original_bytes: null }));
    }
    if (turn < turnSizes.length - 1) {
      events.push(ev('AssistantMessageRecorded', { message_id: `a${turn}`, text: `Read ${calls} logs, nothing conclusive yet.` }));
      events.push(ev('TurnEnded', { turn_id: `t${turn}`, status: 'completed', model_calls: calls + 1 }));
    }
  });
  return events;
}

/** 150 run calls: fourteen turns of ten, one of eight, and the running turn's two. */
const LONG = session([...Array<number>(14).fill(10), 8, 2]);
const RESERVE = 1_000;

/** Starts with the system message; every tool call answered right after it, every answer after its call. */
function expectValidChat(messages: readonly LlmMessage[]): void {
  expect(messages[0]?.role).toBe('system');
  expect(messages.slice(1).filter((m) => m.role === 'system')).toEqual([]);
  messages.forEach((m, i) => {
    if (m.role === 'assistant' && m.toolCalls) {
      const ids = m.toolCalls.map((c) => c.id);
      expect(messages.slice(i + 1, i + 1 + ids.length).map((a) => (a.role === 'tool' ? a.toolCallId : a.role))).toEqual(ids);
    }
    if (m.role === 'tool') {
      let call = i - 1;
      while (messages[call]?.role === 'tool') call--;
      const asking = messages[call];
      expect(asking?.role === 'assistant' && asking.toolCalls?.some((c) => c.id === m.toolCallId)).toBe(true);
    }
  });
}

const toolMessage = (messages: readonly LlmMessage[], id: string) => messages.find((m) => m.role === 'tool' && m.toolCallId === id);
const stubs = (fit: ContextFit) => fit.messages.filter((m): m is Extract<LlmMessage, { role: 'tool' }> => m.role === 'tool' && m.content.startsWith('[elided:'));
const runCallIds = (messages: readonly LlmMessage[]) => messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])).filter((id) => id.startsWith('call-'));

describe('fitModelMessages', () => {
  it('returns a session under the budget exactly as buildModelMessages builds it', () => {
    const events = session([3, 2]);
    const fit = fitModelMessages(SYSTEM, events, { tokens: 32_000, tools: TOOLS });
    expect(fit.messages).toEqual(buildModelMessages(SYSTEM, events));
    expect(fit).toMatchObject({ budgetTokens: 32_000, elidedResults: 0, foldedTurns: 0, fits: true });
    expect(fit.estimatedTokens).toBe(countPromptTokens(fit.messages, TOOLS));
  });

  it('gives the same messages for the same events and budget', () => {
    const budget = { tokens: 8_000 - RESERVE, tools: TOOLS };
    const first = fitModelMessages(SYSTEM, LONG, budget);
    expect(fitModelMessages(SYSTEM, structuredClone(LONG), budget)).toEqual(first);
    expect(fitModelMessages(SYSTEM, LONG, budget)).toEqual(first);
  });

  it.each([8_000, 16_000, 32_000])('fits 150 run calls of 3 KiB into %i tokens less a reserve, keeping what must stay whole', (window) => {
    const budget = window - RESERVE;
    const full = buildModelMessages(SYSTEM, LONG);
    expect(countPromptTokens(full, TOOLS)).toBeGreaterThan(200_000);

    const fit = fitModelMessages(SYSTEM, LONG, { tokens: budget, tools: TOOLS });

    expect(fit.fits).toBe(true);
    expect(fit.budgetTokens).toBe(budget);
    expect(fit.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(fit.estimatedTokens).toBe(countPromptTokens(fit.messages, TOOLS));
    expect(fit.messages[0]).toEqual({ role: 'system', content: SYSTEM });
    expectValidChat(fit.messages);
    // The goal and the plan, whole, right after the system message.
    expect(fit.messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining(`Goal: ${GOAL}\nPlan (generation 1):\n1. [running] Read the logs\n2. [pending] Fix the mount\n3. [pending] Run the backup`) as string });
    // The latest turn whole: its message, both calls and their results as built.
    const latest = full.slice(full.findLastIndex((m) => m.role === 'user'));
    expect(fit.messages.slice(-latest.length)).toEqual(latest);
    expect(toolMessage(fit.messages, 'call-149')).toEqual(toolMessage(full, 'call-149'));
    // Every elided result names its call and how to read it again; the oldest go first.
    expect(stubs(fit)).toHaveLength(fit.elidedResults);
    for (const stub of stubs(fit)) expect(stub.content).toMatch(new RegExp(`; call get_tool_result with tool_call_id "${stub.toolCallId}" to read it again\\]$`));
    const kept = runCallIds(fit.messages);
    const firstKept = Number(kept[0]?.slice('call-'.length));
    expect(stubs(fit).map((s) => s.toolCallId)).toEqual(kept.slice(0, fit.elidedResults));
    expect(fit.foldedTurns > 0).toBe(firstKept > 0);
    expect(fit.elidedResults).toBeGreaterThan(0);
  });

  it('elides the oldest results first, each to a stub that says what it was, and folds nothing while that is enough', () => {
    const fit = fitModelMessages(SYSTEM, LONG, { tokens: 32_000 - RESERVE, tools: TOOLS });
    expect(fit.foldedTurns).toBe(0);
    expect(stubs(fit).map((s) => s.toolCallId)).toEqual(Array.from({ length: fit.elidedResults }, (_, n) => `call-${n}`));
    const bytes = (n: number) => Buffer.byteLength(JSON.stringify((LONG.find((e) => e.type === 'ToolCallCompleted' && e.data.tool_call_id === `call-${n}`)!.data as { result: unknown }).result));
    expect(toolMessage(fit.messages, 'call-0')).toEqual({
      role: 'tool',
      toolCallId: 'call-0',
      content: `[elided: run host:strong → succeeded, exit 0, ${bytes(0)} bytes; call get_tool_result with tool_call_id "call-0" to read it again]`,
    });
    expect((toolMessage(fit.messages, 'call-9') as { content: string }).content).toBe(
      `[elided: run host:strong → failed, exit 1, ${bytes(9)} bytes; call get_tool_result with tool_call_id "call-9" to read it again]`,
    );
    // Everything else is as built, and the calls stay.
    expect(fit.messages).toHaveLength(buildModelMessages(SYSTEM, LONG).length + 1);
  });

  it('folds the oldest turns into a digest of what happened, from the events, newest lines kept', () => {
    const fit = fitModelMessages(SYSTEM, LONG, { tokens: 8_000 - RESERVE, tools: TOOLS });
    expect(fit.foldedTurns).toBeGreaterThan(10);
    const memo = fit.messages[1] as { content: string };
    expect(memo.content).toContain(`[nomos] What happened in the first ${fit.foldedTurns} turns, folded away`);
    // The newest folded call is in the digest with its command and outcome; what the model said is not.
    const lastFolded = Number(runCallIds(fit.messages)[0]!.slice('call-'.length)) - 1;
    const target = lastFolded % 3 === 0 ? 'host:strong' : 'lxc:rclone';
    const outcome = lastFolded % 10 === 9 ? 'failed (exit 1)' : 'succeeded (exit 0)';
    expect(memo.content).toContain(`- run on ${target}: journalctl -u rclone-sync --since -${lastFolded + 1}h --no-pager | tail -n 40 → ${outcome} [tool_call_id "call-${lastFolded}"]`);
    expect(memo.content).not.toContain('nothing conclusive');
    expect(memo.content).toMatch(/oldest first; \d+ older lines left out/);
  });

  it('elides the latest turn’s results too when it alone is too big, and says it does not fit when even that is not enough', () => {
    const events = session([2, 3]);
    const floor = countPromptTokens([{ role: 'system', content: SYSTEM }], TOOLS);
    const tight = fitModelMessages(SYSTEM, events, { tokens: floor + 2_000, tools: TOOLS });
    expectValidChat(tight.messages);
    expect(tight).toMatchObject({ fits: true, foldedTurns: 1, elidedResults: 2 });
    // Oldest first within the latest turn as well: its last result is still whole.
    expect(stubs(tight).map((s) => s.toolCallId)).toEqual(['call-2', 'call-3']);
    expect(toolMessage(tight.messages, 'call-4')).toEqual(toolMessage(buildModelMessages(SYSTEM, events), 'call-4'));

    const hopeless = fitModelMessages(SYSTEM, events, { tokens: floor + 50, tools: TOOLS });
    expectValidChat(hopeless.messages);
    expect(hopeless.fits).toBe(false);
    expect(hopeless.estimatedTokens).toBeGreaterThan(floor + 50);
    expect(stubs(hopeless).map((s) => s.toolCallId)).toEqual(['call-2', 'call-3', 'call-4']);
    expect(hopeless.messages[0]).toEqual({ role: 'system', content: SYSTEM });
    expect((hopeless.messages[1] as { content: string }).content).toContain(`Goal: ${GOAL}`);
  });
});
