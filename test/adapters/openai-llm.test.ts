// The OpenAI adapter through the real openai SDK against a scripted OpenAI-compatible server on loopback:
// streaming, tool-call reassembly, the request it sends, provider errors without SDK retries, abort and deadline.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiLlm } from '../../src/adapters/llm/openai.ts';
import { type LlmCompletion, type LlmMessage, LlmProviderError, type LlmToolDef } from '../../src/ports/llm.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';

const USER: LlmMessage[] = [{ role: 'user', content: 'How are the hosts?' }];

let fake: FakeOpenAi;
let llm: OpenAiLlm;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  llm = new OpenAiLlm({ apiKey: 'test-key', baseURL: fake.baseURL, model: 'fake-model' });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
});

async function complete(messages: readonly LlmMessage[] = USER, tools: readonly LlmToolDef[] = [], signal?: AbortSignal) {
  const tokens: string[] = [];
  const completion: LlmCompletion = await llm.complete({ messages, tools, ...(signal && { signal }) }, (text) => tokens.push(text));
  return { completion, tokens };
}

async function providerError(promise: Promise<unknown>): Promise<LlmProviderError> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmProviderError);
  return error as LlmProviderError;
}

describe('streamed text', () => {
  it('arrives as several tokens and as the whole content', async () => {
    fake.script({ content: 'All three hosts are up.', chunks: 4 });
    const { completion, tokens } = await complete();
    expect(tokens).toHaveLength(4);
    expect(tokens.join('')).toBe('All three hosts are up.');
    expect(completion).toEqual({ content: 'All three hosts are up.', toolCalls: [], finishReason: 'stop', refusal: null });
  });

  it('returns blank content as an empty string without calling onToken', async () => {
    fake.script({ content: '' });
    const { completion, tokens } = await complete();
    expect(tokens).toEqual([]);
    expect(completion.content).toBe('');
    expect(completion.toolCalls).toEqual([]);
  });
});

describe('tool calls', () => {
  it('reassembles one call whose arguments arrive in pieces', async () => {
    const args = { host: 'pve-1', filter: { status: 'running' }, limit: 5 };
    fake.script({ toolCalls: [{ id: 'call_abc', name: 'list_guests', arguments: args }] });
    const { completion, tokens } = await complete();
    expect(tokens).toEqual([]);
    expect(completion.finishReason).toBe('tool_calls');
    expect(completion.toolCalls).toEqual([{ id: 'call_abc', name: 'list_guests', arguments: JSON.stringify(args) }]);
    expect(JSON.parse(completion.toolCalls[0]!.arguments)).toEqual(args);
  });

  it('keeps two calls in one reply apart, with the content streamed before them', async () => {
    fake.script({
      content: 'Checking both.',
      toolCalls: [
        { id: 'call_1', name: 'host_status', arguments: { host: 'pve-1' } },
        { id: 'call_2', name: 'host_status', arguments: { host: 'pve-2' } },
      ],
    });
    const { completion, tokens } = await complete();
    expect(tokens.join('')).toBe('Checking both.');
    expect(completion.content).toBe('Checking both.');
    expect(completion.toolCalls).toEqual([
      { id: 'call_1', name: 'host_status', arguments: '{"host":"pve-1"}' },
      { id: 'call_2', name: 'host_status', arguments: '{"host":"pve-2"}' },
    ]);
  });
});

describe('the request sent', () => {
  it('maps every message role and the tools to the chat-completions shape', async () => {
    fake.script({ content: 'Done.' });
    const messages: LlmMessage[] = [
      { role: 'system', content: 'You are Nomos.' },
      { role: 'user', content: 'Restart the web container.' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_9', name: 'restart_guest', arguments: '{"id":101}' }] },
      { role: 'tool', toolCallId: 'call_9', content: '{"ok":true}' },
      { role: 'assistant', content: 'Restarted.' },
    ];
    const tools: LlmToolDef[] = [
      { name: 'restart_guest', description: 'Restart a guest.', parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
    ];
    await complete(messages, tools);

    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toEqual({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'You are Nomos.' },
        { role: 'user', content: 'Restart the web container.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'restart_guest', arguments: '{"id":101}' } }] },
        { role: 'tool', tool_call_id: 'call_9', content: '{"ok":true}' },
        { role: 'assistant', content: 'Restarted.' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'restart_guest', description: 'Restart a guest.', parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
        },
      ],
    });
  });

  it('omits tools when there are none', async () => {
    fake.script({ content: 'Hi.' });
    await complete();
    expect(fake.requests[0]).not.toHaveProperty('tools');
  });
});

describe('provider errors', () => {
  it.each([500, 429])('HTTP %i becomes an LlmProviderError with that status, after one request only', async (status) => {
    fake.script({ status, error: `scripted ${status}` }, { content: 'a retry would get this' });
    const error = await providerError(complete());
    expect(error.status).toBe(status);
    expect(error.message).toContain(`scripted ${status}`);
    expect(fake.requests).toHaveLength(1);
  });

  it('a stream the server cuts off becomes an LlmProviderError without status', async () => {
    fake.script({ hangMs: 50 });
    const error = await providerError(complete());
    expect(error.status).toBeNull();
  });

  it('a stream that outlives timeoutMs becomes an LlmProviderError', async () => {
    const impatient = new OpenAiLlm({ apiKey: 'test-key', baseURL: fake.baseURL, model: 'fake-model', timeoutMs: 200 });
    fake.script({ hangMs: 10_000 });
    const started = Date.now();
    const error = await providerError(impatient.complete({ messages: USER, tools: [] }, () => {}));
    expect(error.status).toBeNull();
    expect(error.message).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('onToken', () => {
  it('an error thrown by onToken comes back as is, not as a provider error', async () => {
    fake.script({ content: 'Hello there.' });
    const bug = new Error('event store down');
    await expect(llm.complete({ messages: USER, tools: [] }, () => { throw bug; })).rejects.toBe(bug);
  });
});

describe('abort', () => {
  it('rejects promptly with the AbortError when the signal fires mid-stream', async () => {
    fake.script({ hangMs: 10_000 });
    const controller = new AbortController();
    const pending = complete(USER, [], controller.signal);
    await expect.poll(() => fake.requests.length).toBe(1);
    const aborted = Date.now();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - aborted).toBeLessThan(1_000);
  });

  it('rejects with the AbortError, sending nothing, when the signal has already fired', async () => {
    fake.script({ content: 'never asked' });
    const pending = complete(USER, [], AbortSignal.abort());
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('the fake server itself', () => {
  it('streams chat.completion.chunk events ending in [DONE]', async () => {
    fake.script({ content: 'abcdef', chunks: 3 });
    const res = await fetch(`${fake.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [], stream: true }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text()).split('\n\n').filter((e) => e !== '');
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'm' && c.choices[0].index === 0)).toBe(true);
    expect(chunks.map((c) => c.choices[0].delta.content ?? null)).toEqual(['', 'ab', 'cd', 'ef', null]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('answers 401 without a bearer token, 404 elsewhere, and 500 once the script is exhausted', async () => {
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${fake.baseURL}${path}`, { method: 'POST', headers, body: JSON.stringify({ model: 'm', messages: [], stream: true }) });
    fake.script();
    expect((await post('/chat/completions', {})).status).toBe(401);
    expect((await post('/embeddings', { authorization: 'Bearer x' })).status).toBe(404);
    const exhausted = await post('/chat/completions', { authorization: 'Bearer x' });
    expect(exhausted.status).toBe(500);
    expect(await exhausted.json()).toMatchObject({ error: { message: 'script exhausted' } });
  });

  it('can decide each reply from the request', async () => {
    fake.respond((request, index) => ({ content: `${index}:${request.messages.length}` }));
    expect((await complete()).completion.content).toBe('0:1');
    expect((await complete([...USER, { role: 'assistant', content: 'ok' }])).completion.content).toBe('1:2');
  });
});
