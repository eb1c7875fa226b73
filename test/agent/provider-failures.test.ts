// Providers fail in their own ways; each ends in a recorded, understandable state, never a silent stop. Against the
// tests' OpenAI-compatible server (real HTTP, the real openai SDK), on both databases: 429 with Retry-After waited
// for and retried, a Retry-After too long not waited for, 5xx retried then failing the turn with the provider's
// words, a cut stream retried once, finish_reason length told as output_limit, malformed tool-call JSON answered
// as a tool error the model corrects, several tool calls in one answer run in order, context_length_exceeded
// answered by a tighter budget and one retry; every try a row of GET /sessions/:id/model_calls, the failures in
// the server's log (never the key) and in GET /agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentLogger } from '../../src/agent/agent.ts';
import { databases } from '../support/databases.ts';
import { type AgentWorld, startAgentWorld } from '../support/agent-world.ts';
import type { ScriptedReply } from '../support/fake-openai.ts';
import { sshOf } from '../support/ssh-peer.ts';
import { type SseMessage, readSse } from '../support/sse-reader.ts';

const WINDOW = 6_000;
const say = (content: string): ScriptedReply => ({ content });

interface CallRow {
  attempt: number;
  error: { kind: string; status: number | null; code: string | null; message: string } | null;
  finish_reason: string | null;
  context: { budget_tokens: number; estimated_tokens: number; elided_results: number };
}

describe.each(databases)('provider failures on $name', (database) => {
  let world: AgentWorld;
  const logged: Array<{ level: 'warn' | 'error'; fields: Record<string, unknown>; message: string }> = [];

  beforeAll(async () => {
    // The budget (20 000 less its reserve) is larger than the provider's real window (6 000): only the provider can say so.
    world = await startAgentWorld(database, { contextTokens: 20_000, execution: { shortWaitMs: 10_000, hardLimitMs: 60_000, approvalTtlMs: 60_000, hungAfterMs: 60_000 } }, { window: WINDOW });
    const logger: AgentLogger = {
      warn: (fields, message) => logged.push({ level: 'warn', fields, message }),
      error: (fields, message) => logged.push({ level: 'error', fields, message }),
    };
    world.server.runtime.agent!.logTo(logger);
    expect((await world.server.request('POST', '/entities', { slug: 'host:peer', type: 'host', ssh: sshOf(world.peer) })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  /** A turn in a new session: its SSE messages (tokens left out), its model calls and the requests the provider got. */
  async function turn(...replies: ScriptedReply[]): Promise<{ messages: SseMessage[]; calls: CallRow[]; session: string; requestsAt: number[] }> {
    const requestsAt: number[] = [];
    const queue = [...replies];
    world.llm.respond(() => {
      requestsAt.push(Date.now());
      return queue.shift() ?? { status: 500, error: 'script exhausted' };
    });
    const res = await fetch(`${world.server.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'go' }) });
    expect(res.status).toBe(200);
    const messages = (await readSse(res, (m) => m.type === 'done')).filter((m) => m.type !== 'token');
    const session = messages[0]!.session_id;
    const calls = (await world.server.request('GET', `/sessions/${session}/model_calls?min_position=${messages.at(-1)!.id}`)).body as CallRow[];
    return { messages, calls, session, requestsAt };
  }
  const kinds = (messages: SseMessage[]) => messages.map((m) => m.type);
  const failure = (messages: SseMessage[]) => messages.find((m) => m.type === 'error')?.data as { reason: string; detail: string } | undefined;

  it('waits out a 429 for its Retry-After, tries again, and records both tries', async () => {
    logged.length = 0;
    const { messages, calls, requestsAt } = await turn({ status: 429, retryAfter: '1', code: 'rate_limit_exceeded', error: 'Rate limit reached for requests' }, say('Done after the wait.'));
    expect(kinds(messages)).toEqual(['text', 'done']);
    expect(requestsAt[1]! - requestsAt[0]!).toBeGreaterThanOrEqual(950);
    expect(calls.map((c) => [c.attempt, c.error?.status ?? null, c.error?.code ?? null, c.finish_reason])).toEqual([
      [1, 429, 'rate_limit_exceeded', null],
      [2, null, null, 'stop'],
    ]);
    // Told in the log at warn level, naming the provider's host and its words, never the key.
    const warned = logged.find((l) => l.level === 'warn')!;
    expect(warned.message).toContain(new URL(world.llm.baseURL).host);
    expect(warned.message).toContain('Rate limit reached');
    expect(warned.fields).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retry_in_ms: 1_000 });
    expect(JSON.stringify(logged)).not.toContain('test-key');
  });

  it('does not wait for a Retry-After beyond its bound: the turn fails at once with the provider’s words', async () => {
    logged.length = 0;
    const started = Date.now();
    const { messages, calls } = await turn({ status: 429, retryAfter: '3600', error: 'You exceeded your current quota' });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(kinds(messages)).toEqual(['error', 'done']);
    expect(failure(messages)).toMatchObject({ reason: 'provider_error' });
    expect(failure(messages)!.detail).toContain('You exceeded your current quota');
    expect(calls).toHaveLength(1);
    expect(logged.map((l) => l.level)).toEqual(['error']);
    const agent = (await world.server.request('GET', '/agent')).body;
    expect(agent.last_provider_error).toMatchObject({ status: 429, provider_host: new URL(world.llm.baseURL).host });
    expect(agent.last_provider_error.message).toContain('You exceeded your current quota');
  });

  it('retries a 5xx twice, then fails the turn with what the provider last said, every try recorded', async () => {
    const { messages, calls } = await turn({ status: 502, error: 'bad gateway' }, { status: 503, error: 'overloaded' }, { status: 500, error: 'still broken' });
    expect(kinds(messages)).toEqual(['error', 'done']);
    expect(failure(messages)!.reason).toBe('provider_error');
    expect(failure(messages)!.detail).toMatch(/still broken.*after 3 tries/);
    expect(calls.map((c) => [c.attempt, c.error?.status])).toEqual([
      [1, 502],
      [2, 503],
      [3, 500],
    ]);
  });

  it('tries a cut stream once more; cut twice, the turn fails', async () => {
    const once = await turn({ cut: true, content: 'I will ch' }, say('Checked.'));
    expect(kinds(once.messages)).toEqual(['text', 'done']);
    expect(once.calls.map((c) => c.error?.kind ?? 'ok')).toEqual(['stream_cut', 'ok']);
    const twice = await turn({ cut: true }, { cut: true }, say('never'));
    expect(kinds(twice.messages)).toEqual(['error', 'done']);
    expect(failure(twice.messages)).toMatchObject({ reason: 'provider_error' });
    expect(failure(twice.messages)!.detail).toMatch(/without a finish reason/);
    expect(twice.calls).toHaveLength(2);
  });

  it('tells an answer cut at the output limit as output_limit, keeping what it wrote and running none of it', async () => {
    const { messages, calls, session } = await turn({ content: 'The first three hosts are fine; the fourth', finishReason: 'length' });
    expect(kinds(messages)).toEqual(['text', 'error', 'done']);
    expect(messages[0]!.data.text).toBe('The first three hosts are fine; the fourth');
    expect(failure(messages)!.reason).toBe('output_limit');
    expect(failure(messages)!.detail).toMatch(/output limit/);
    expect(calls.map((c) => c.finish_reason)).toEqual(['length']);
    const view = (await world.server.request('GET', `/sessions/${session}`)).body.session;
    expect(view.model_calls).toBe(1);
  });

  it('answers malformed tool-call JSON as a tool error the model corrects, and runs several calls of one answer in order', async () => {
    const { messages, session } = await turn(
      { toolCalls: [{ name: 'get_entity', rawArguments: '{"slug": "host:peer"' }] },
      { toolCalls: [{ name: 'get_entity', arguments: { slug: 'host:peer' } }, { name: 'whoami', arguments: {} }, { name: 'list_entities', arguments: {} }] },
      say('host:peer is there.'),
    );
    expect(kinds(messages)).toEqual(['tool_use', 'tool_result', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'text', 'done']);
    const calls = (await world.server.request('GET', `/sessions/${session}/tool_calls`)).body as Array<{ name: string; error: string | null; args: unknown }>;
    expect(calls.map((c) => c.name)).toEqual(['get_entity', 'get_entity', 'whoami', 'list_entities']);
    expect(calls[0]!.error).toMatch(/not valid JSON/);
    expect(calls[0]!.args).toEqual({ raw: '{"slug": "host:peer"' });
    expect(calls.slice(1).map((c) => c.error)).toEqual([null, null, null]);
    // The model was told, in the tool result it answers next.
    const told = world.llm.requests.at(-2)!.messages.find((m: { role: string; content: string }) => m.role === 'tool' && /not valid JSON/.test(m.content));
    expect(told).toBeDefined();
  });

  it('answers context_length_exceeded with a tighter budget and one more try, recorded', async () => {
    let n = 0;
    const run = (): ScriptedReply => ({ toolCalls: [{ name: 'run', arguments: { target: 'host:peer', command: `seq ${20_000 + n} ${20_512 + n++}` } }] });
    const { messages, calls } = await turn(run(), run(), run(), say('Three counted.'));
    expect(kinds(messages).at(-1)).toBe('done');
    expect(failure(messages)).toBeUndefined();
    const refused = calls.findIndex((c) => c.error !== null);
    expect(refused).toBeGreaterThan(0);
    expect(calls[refused]!.error).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const retried = calls[refused + 1]!;
    expect(retried).toMatchObject({ attempt: 2, error: null });
    expect(retried.context.budget_tokens).toBeLessThan(calls[refused]!.context.budget_tokens);
    expect(retried.context.elided_results).toBeGreaterThan(0);
    // One prompt went over the provider's window (the budget could not know it); after it, none did.
    const sizes = world.llm.requests.slice(-calls.length).map((r) => r.promptTokens);
    expect(sizes.findIndex((tokens) => tokens > WINDOW)).toBe(refused);
    expect(sizes.slice(refused + 1).every((tokens) => tokens <= WINDOW)).toBe(true);
  });
});
