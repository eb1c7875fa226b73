// A long session on a small context window: 150 commands of about 3 KiB of output each, run over a real SSH server
// in ten turns, against the tests' OpenAI-compatible server with an 8 000-token window that refuses a longer prompt
// as OpenAI does (400 context_length_exceeded). The session runs to complete_task with no failed turn; every
// request is within the window and carries the system prompt and the goal; an elided result is read back with
// get_tool_result; the usage the server reported is what the read models sum. The same, shorter, against a server
// that truncates a long prompt silently as Ollama does: with NOMOS_CONTEXT_TOKENS its num_ctx, it truncates none.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databases } from '../support/databases.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { ScriptedReply } from '../support/fake-openai.ts';
import { sshOf } from '../support/ssh-peer.ts';
import { readSse } from '../support/sse-reader.ts';

const WINDOW = 8_000;
/** Runs in one turn, five to an answer: three model calls of tool calls, then the answer. */
const RUNS_PER_TURN = 15;
const PER_ANSWER = 5;
const GOAL = 'Collect the sequence counts from host:peer';
const SYSTEM = readFileSync(new URL('../../prompts/system.md', import.meta.url), 'utf8');

/** 513 lines of six characters: 3 078 bytes of output. */
const command = (n: number) => `seq ${10_000 + n} ${10_512 + n}`;

const PROVIDERS = [
  { provider: 'an OpenAI-style server', truncate: undefined, TURNS: 10 },
  { provider: 'an Ollama-style server', truncate: 'ollama' as const, TURNS: 3 },
];
const cases = databases.flatMap((database) => PROVIDERS.map((p) => ({ ...p, database, name: database.name })));

describe.each(cases)('a long session on an 8 000-token window, $provider, on $name', ({ database, truncate, TURNS }) => {
  let world: AgentWorld;
  /** The id get_tool_result was asked for, and what it returned. */
  let recalled: string | null = null;

  beforeAll(async () => {
    world = await startAgentWorld(database, { contextTokens: WINDOW, execution: { shortWaitMs: 10_000, hardLimitMs: 60_000, approvalTtlMs: 60_000, hungAfterMs: 60_000 } }, { window: WINDOW, ...(truncate && { truncate }) });
    const reg = await world.server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(world.peer) });
    expect(reg.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it(`runs ${TURNS * RUNS_PER_TURN} commands to complete_task, each request within the window with the system prompt and the goal`, async () => {
    const { llm, server } = world;
    let issued = 0;
    llm.respond((request): ScriptedReply => {
      const text = JSON.stringify(request.messages);
      const lastOperator = request.messages.map((m: { role: string; content: unknown }, i: number) => ({ m, i })).filter(({ m }) => m.role === 'user' && typeof m.content === 'string' && m.content.startsWith('batch ')).at(-1);
      const turn = Number(/^batch (\d+)/.exec(String(lastOperator!.m.content))![1]);
      const thisTurn = request.messages.slice(lastOperator!.i + 1);
      const runs = thisTurn.filter((m: { role: string; tool_calls?: Array<{ function: { name: string } }> }) => m.role === 'assistant' && m.tool_calls?.some((c) => c.function.name === 'run')).length;
      const called = (name: string) => thisTurn.some((m: { tool_calls?: Array<{ function: { name: string } }> }) => m.tool_calls?.some((c) => c.function.name === name));
      if (turn === 1 && !called('set_goal')) return { toolCalls: [{ name: 'set_goal', arguments: { goal: GOAL } }] };
      if (runs < RUNS_PER_TURN) {
        const calls = Array.from({ length: PER_ANSWER }, () => ({ name: 'run', arguments: { target: 'host:peer', command: command(issued++) } }));
        return { toolCalls: calls, cachedTokens: 512 };
      }
      if (turn === TURNS) {
        if (!called('get_tool_result')) {
          recalled = /call get_tool_result with tool_call_id \\?"([^"\\]+)\\?"/.exec(text)?.[1] ?? null;
          expect(recalled, 'an elided result names get_tool_result and its id').not.toBeNull();
          return { toolCalls: [{ name: 'get_tool_result', arguments: { tool_call_id: recalled } }] };
        }
        if (!called('complete_task')) {
          return { toolCalls: [{ name: 'complete_task', arguments: { outcome: 'success', summary: `counted ${issued} sequences` } }] };
        }
      }
      return { content: `Batch ${turn} done.` };
    });

    let session: string | undefined;
    for (let turn = 1; turn <= TURNS; turn++) {
      const res = await fetch(`${server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: `batch ${turn}: count the next sequences`, ...(session && { session_id: session }) }) });
      expect(res.status, res.status === 200 ? '' : await res.text()).toBe(200);
      const messages = await readSse(res, (m) => m.type === 'done');
      session ??= messages[0]!.session_id;
      const failures = messages.filter((m) => m.type === 'error');
      expect(failures, `turn ${turn}`).toEqual([]);
      expect(messages.at(-1)!.data.status, `turn ${turn}`).toBe('completed');
    }
    expect(issued).toBe(TURNS * RUNS_PER_TURN);

    // Every request fitted the window (the server would have refused it), with the system prompt first and the goal.
    expect(llm.requests.length).toBeGreaterThan(TURNS * 4);
    for (const [i, request] of llm.requests.entries()) {
      expect(request.promptTokens, `request ${i}`).toBeLessThanOrEqual(WINDOW);
      expect(request.kept, `request ${i} was truncated`).toBeUndefined();
      expect(request.messages[0].role).toBe('system');
      expect(request.messages[0].content.startsWith(SYSTEM.trim().slice(0, 200))).toBe(true);
      if (i > 0) expect(JSON.stringify(request.messages.slice(1)), `request ${i}`).toContain(GOAL);
    }
    // The context was fitted: results elided and turns folded, and the recalled result came back whole.
    const view = await server.request('GET', `/sessions/${session}/model_calls`);
    expect(view.status).toBe(200);
    const calls = view.body as Array<{ input_tokens: number; output_tokens: number; cached_input_tokens: number; error: unknown; context: { elided_results: number; folded_turns: number; budget_tokens: number; estimated_tokens: number } }>;
    expect(calls.every((c) => c.error === null)).toBe(true);
    expect(calls.some((c) => c.context.elided_results > 0)).toBe(true);
    if (TURNS >= 10) expect(calls.some((c) => c.context.folded_turns > 0)).toBe(true);
    for (const c of calls) expect(c.context.estimated_tokens).toBeLessThanOrEqual(c.context.budget_tokens);
    const toolCalls = (await server.request('GET', `/sessions/${session}/tool_calls?limit=500`)).body as Array<{ id: string; name: string; result: any; args: any }>;
    const recall = toolCalls.find((c) => c.name === 'get_tool_result')!;
    const original = toolCalls.find((c) => c.id === recalled)!;
    expect(original.name).toBe('run');
    expect(recall.result).toMatchObject({ tool_call_id: recalled, name: 'run', result: { stdout: original.result.stdout } });
    expect(original.result.stdout.length).toBeGreaterThan(3_000);

    // The usage recorded is what the server reported, call for call and in the sums.
    expect(calls).toHaveLength(llm.reported.length);
    const sum = (pick: (u: (typeof llm.reported)[number]) => number) => llm.reported.reduce((n, u) => n + pick(u), 0);
    const session_ = (await server.request('GET', `/sessions/${session}`)).body.session;
    expect(session_).toMatchObject({
      status: 'done',
      outcome: 'success',
      model_calls: calls.length,
      input_tokens: sum((u) => u.prompt_tokens),
      output_tokens: sum((u) => u.completion_tokens),
      cached_input_tokens: sum((u) => u.cached_tokens),
    });
    expect(calls.map((c) => c.input_tokens)).toEqual(llm.reported.map((u) => u.prompt_tokens));
  }, 300_000);
});
