// The context fitted to a token budget: untouched when it fits; else the oldest results elided to stubs that
// name get_tool_result, then the oldest turns folded into a digest, the goals, the plan and the latest turn kept
// whole, and always a chat the API accepts. The same events and budget give the same messages.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fitModelMessages, type ContextFit } from '../../src/agent/context-fit.ts';
import { buildModelMessages } from '../../src/agent/context.ts';
import { countPromptTokens } from '../../src/agent/tokens.ts';
import { toolDefinitions } from '../../src/agent/tools.ts';
import { GOAL, investigation } from '../../bench/context-session.ts';
import type { LlmMessage } from '../../src/ports/llm.ts';

const SYSTEM = `${readFileSync(new URL('../../prompts/system.md', import.meta.url), 'utf8')}\n\nFleet: host:strong (Proxmox), lxc:rclone, vm:zimaos.`;
const TOOLS = toolDefinitions();
const session = (turnSizes: readonly number[]) => investigation(turnSizes);

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
