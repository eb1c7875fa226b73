// The OpenAI adapter through the real openai SDK against a scripted OpenAI-compatible server on loopback:
// streaming, tool-call reassembly, the request it sends, usage and timing, provider errors by kind (without SDK
// retries), abort and deadline; and the fake server's own context window, usage chunk and token count.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiLlm } from '../../src/adapters/llm/openai.ts';
import { type LlmCompletion, type LlmMessage, LlmProviderError, type LlmToolDef } from '../../src/ports/llm.ts';
import { type FakeOpenAi, type FakeOpenAiOptions, promptTokens, startFakeOpenAi } from '../support/fake-openai.ts';

const USER: LlmMessage[] = [{ role: 'user', content: 'How are the hosts?' }];
/** What the SDK sends for USER, as the fake counts it. */
const USER_TOKENS = promptTokens({ messages: USER });

let fake: FakeOpenAi;
let llm: OpenAiLlm;
/** Fakes started with options by a test, closed at the end. */
const others: FakeOpenAi[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAi();
  llm = new OpenAiLlm({ apiKey: 'test-key', baseURL: fake.baseURL, model: 'fake-model' });
});
afterAll(async () => {
  await Promise.all([fake, ...others].map((f) => f.close()));
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.reported.length = 0;
});

async function startOther(options: FakeOpenAiOptions): Promise<{ server: FakeOpenAi; client: OpenAiLlm }> {
  const server = await startFakeOpenAi(options);
  others.push(server);
  return { server, client: new OpenAiLlm({ apiKey: 'test-key', baseURL: server.baseURL, model: 'fake-model' }) };
}

async function complete(messages: readonly LlmMessage[] = USER, tools: readonly LlmToolDef[] = [], signal?: AbortSignal, client = llm) {
  const tokens: string[] = [];
  const completion: LlmCompletion = await client.complete({ messages, tools, ...(signal && { signal }) }, (text) => tokens.push(text));
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

const tokensOf = (text: string): number => countTokens(text);

describe('streamed text', () => {
  it('arrives as several tokens and as the whole content, with the model, usage and timing', async () => {
    fake.script({ content: 'All three hosts are up.', chunks: 4 });
    const { completion, tokens } = await complete();
    expect(tokens).toHaveLength(4);
    expect(tokens.join('')).toBe('All three hosts are up.');
    expect(completion).toEqual({
      content: 'All three hosts are up.',
      toolCalls: [],
      finishReason: 'stop',
      refusal: null,
      model: 'fake-model',
      usage: { inputTokens: USER_TOKENS, outputTokens: 6, cachedInputTokens: 0 },
      timing: { durationMs: expect.any(Number), firstTokenMs: expect.any(Number) },
    });
  });

  it('returns blank content as an empty string without calling onToken, and no first token', async () => {
    fake.script({ content: '' });
    const { completion, tokens } = await complete();
    expect(tokens).toEqual([]);
    expect(completion.content).toBe('');
    expect(completion.toolCalls).toEqual([]);
    expect(completion.timing.firstTokenMs).toBeNull();
  });

  it.each(['length', 'content_filter'])('a reply the provider stopped with %s is returned with that finish reason, not an error', async (finishReason) => {
    fake.script({ content: 'The hosts are pve-1, pve-2 and', finishReason });
    const { completion } = await complete();
    expect(completion.finishReason).toBe(finishReason);
    expect(completion.content).toBe('The hosts are pve-1, pve-2 and');
  });

  it('names the model the provider says answered, while the client keeps the one it asks for', async () => {
    const { server, client } = await startOther({ answerAs: 'fake-model-2025-01-01' });
    server.script({ content: 'Hi.' });
    const { completion } = await complete(USER, [], undefined, client);
    expect(completion.model).toBe('fake-model-2025-01-01');
    expect(client.model).toBe('fake-model');
    expect(server.requests[0]!.model).toBe('fake-model');
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
    expect(completion.timing.firstTokenMs).not.toBeNull();
  });

  it('keeps three calls in one reply apart and in order, with the content streamed before them', async () => {
    fake.script({
      content: 'Checking all three.',
      toolCalls: [
        { id: 'call_1', name: 'host_status', arguments: { host: 'pve-1' } },
        { id: 'call_2', name: 'list_guests', arguments: { host: 'pve-2' } },
        { id: 'call_3', name: 'host_status', arguments: { host: 'pve-3' } },
      ],
    });
    const { completion, tokens } = await complete();
    expect(tokens.join('')).toBe('Checking all three.');
    expect(completion.content).toBe('Checking all three.');
    expect(completion.toolCalls).toEqual([
      { id: 'call_1', name: 'host_status', arguments: '{"host":"pve-1"}' },
      { id: 'call_2', name: 'list_guests', arguments: '{"host":"pve-2"}' },
      { id: 'call_3', name: 'host_status', arguments: '{"host":"pve-3"}' },
    ]);
  });

  it('passes arguments that are not JSON through untouched', async () => {
    fake.script({ toolCalls: [{ id: 'call_bad', name: 'run', rawArguments: '{"command": "uptime", "target": ' }] });
    const { completion } = await complete();
    expect(completion.toolCalls).toEqual([{ id: 'call_bad', name: 'run', arguments: '{"command": "uptime", "target": ' }]);
  });

  it('a call without a name is a malformed reply', async () => {
    fake.script({ toolCalls: [{ id: 'call_x', name: '', arguments: {} }] });
    const error = await providerError(complete());
    expect(error.kind).toBe('malformed');
    expect(error.message).toBe('tool call 0 arrived without a name');
  });
});

describe('the request sent', () => {
  it('maps every message role and the tools to the chat-completions shape, asking for usage', async () => {
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

    const wire = {
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
    };
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toEqual({ model: 'fake-model', ...wire, streamOptions: { include_usage: true }, promptTokens: promptTokens(wire) });
  });

  it('omits tools when there are none', async () => {
    fake.script({ content: 'Hi.' });
    await complete();
    expect(fake.requests[0]).not.toHaveProperty('tools');
  });
});

describe('usage', () => {
  it('reads the provider’s counts, cached input tokens included', async () => {
    fake.script({ content: 'Two hosts are down.', cachedTokens: 7 });
    const { completion } = await complete();
    expect(fake.reported).toEqual([{ prompt_tokens: USER_TOKENS, completion_tokens: tokensOf('Two hosts are down.'), cached_tokens: 7 }]);
    expect(completion.usage).toEqual({ inputTokens: USER_TOKENS, outputTokens: tokensOf('Two hosts are down.'), cachedInputTokens: 7 });
  });

  it('counts tool-call arguments as output', async () => {
    fake.script({ content: 'One moment.', toolCalls: [{ id: 'call_1', name: 'host_status', arguments: { host: 'pve-1' } }] });
    const { completion } = await complete();
    expect(completion.usage?.outputTokens).toBe(tokensOf('One moment.') + tokensOf('{"host":"pve-1"}'));
  });

  it('reads usage sent on the finish chunk instead of a chunk of its own', async () => {
    const { server, client } = await startOther({ usage: 'with-finish' });
    server.script({ content: 'Fine.', cachedTokens: 3 });
    const { completion } = await complete(USER, [], undefined, client);
    expect(completion.usage).toEqual({ inputTokens: USER_TOKENS, outputTokens: tokensOf('Fine.'), cachedInputTokens: 3 });
  });

  it('is null when the server reports none, though it was asked for', async () => {
    const { server, client } = await startOther({ usage: false });
    server.script({ content: 'Fine.' });
    const { completion } = await complete(USER, [], undefined, client);
    expect(server.requests[0]!.streamOptions).toEqual({ include_usage: true });
    expect(server.reported).toEqual([]);
    expect(completion.usage).toBeNull();
  });
});

describe('timing', () => {
  it('measures the first token and the whole call', async () => {
    fake.script({ content: 'abc', chunks: 3, delayMs: 40 });
    const { completion } = await complete();
    const { durationMs, firstTokenMs } = completion.timing;
    expect(firstTokenMs).toBeGreaterThanOrEqual(35);
    expect(firstTokenMs).toBeLessThan(durationMs);
    expect(durationMs).toBeGreaterThanOrEqual(115);
    expect(durationMs).toBeLessThan(2_000);
  });
});

describe('provider errors', () => {
  it.each([500, 429])('HTTP %i becomes an LlmProviderError with that status, after one request only', async (status) => {
    fake.script({ status, error: `scripted ${status}` }, { content: 'a retry would get this' });
    const error = await providerError(complete());
    expect(error.status).toBe(status);
    expect(error.kind).toBe('http');
    expect(error.message).toContain(`scripted ${status}`);
    expect(fake.requests).toHaveLength(1);
  });

  it('429 carries the provider’s words, its code, Retry-After in ms and the timing so far', async () => {
    fake.script({ status: 429, error: 'Rate limit reached for requests', code: 'rate_limit_exceeded', retryAfter: '2' });
    const error = await providerError(complete());
    expect(error.message).toBe('429 Rate limit reached for requests');
    expect(error.providerCode).toBe('rate_limit_exceeded');
    expect(error.retryAfterMs).toBe(2_000);
    expect(error.contextExceeded).toBe(false);
    expect(error.details.timing).toEqual({ durationMs: expect.any(Number), firstTokenMs: null });
  });

  it.each([
    ['retry-after-ms, preferred to Retry-After', { retryAfterMs: '1500', retryAfter: '9' }, 1_500],
    ['Retry-After in decimal seconds', { retryAfter: '0.25' }, 250],
    ['a Retry-After date in the past', { retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' }, 0],
    ['a Retry-After that is neither', { retryAfter: 'soon' }, null],
    ['no Retry-After', {}, null],
  ])('reads %s', async (_, headers, expected) => {
    fake.script({ status: 429, ...headers });
    expect((await providerError(complete())).retryAfterMs).toBe(expected);
  });

  it('reads a Retry-After HTTP date as the time until then', async () => {
    fake.script({ status: 503, retryAfter: new Date(Date.now() + 10_000).toUTCString() });
    const { retryAfterMs } = await providerError(complete());
    // An HTTP date has whole seconds: up to one is lost, plus the time the call took.
    expect(retryAfterMs).toBeGreaterThanOrEqual(8_000);
    expect(retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('503 without a code takes the error type as the provider code', async () => {
    fake.script({ status: 503, error: 'The engine is currently overloaded', type: 'server_error' });
    const error = await providerError(complete());
    expect([error.kind, error.status, error.providerCode]).toEqual(['http', 503, 'server_error']);
  });

  it('a prompt over the window is context_length_exceeded, in OpenAI’s words', async () => {
    const { server, client } = await startOther({ window: 50 });
    server.script({ content: 'fits' });
    const long: LlmMessage[] = [{ role: 'user', content: 'status of every host, please. '.repeat(20) }];
    const error = await providerError(complete(long, [], undefined, client));
    expect(error.status).toBe(400);
    expect(error.kind).toBe('http');
    expect(error.providerCode).toBe('context_length_exceeded');
    expect(error.contextExceeded).toBe(true);
    expect(error.message).toBe(
      `400 This model's maximum context length is 50 tokens. However, your messages resulted in ${promptTokens({ messages: long })} tokens. Please reduce the length of the messages.`,
    );
    // The refusal did not use up the script: a prompt that fits gets the reply.
    expect((await complete(USER, [], undefined, client)).completion.content).toBe('fits');
  });

  it('a stream that ends without a finish reason is stream_cut, after the content it did send', async () => {
    fake.script({ cut: true, content: 'Partial ans' });
    const tokens: string[] = [];
    const error = await providerError(llm.complete({ messages: USER, tools: [] }, (text) => tokens.push(text)));
    expect(error.kind).toBe('stream_cut');
    expect(error.status).toBeNull();
    expect(error.message).toBe("the provider's stream ended without a finish reason after 4 chunks");
    expect(tokens.join('')).toBe('Partial ans');
    expect(error.details.timing?.firstTokenMs).not.toBeNull();
  });

  it('a connection the server resets mid-stream is a network failure without status', async () => {
    fake.script({ hangMs: 50 });
    const error = await providerError(complete());
    expect(error.status).toBeNull();
    expect(error.kind).toBe('network');
  });

  it('a refused connection is a network failure', async () => {
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((ok) => closed.close(() => ok()));
    const nobody = new OpenAiLlm({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${port}/v1`, model: 'fake-model' });
    const error = await providerError(nobody.complete({ messages: USER, tools: [] }, () => {}));
    expect([error.kind, error.status]).toEqual(['network', null]);
  });

  it('a stream that outlives timeoutMs is a timeout', async () => {
    const impatient = new OpenAiLlm({ apiKey: 'test-key', baseURL: fake.baseURL, model: 'fake-model', timeoutMs: 200 });
    fake.script({ hangMs: 10_000 });
    const started = Date.now();
    const error = await providerError(impatient.complete({ messages: USER, tools: [] }, () => {}));
    expect(error.status).toBeNull();
    expect(error.kind).toBe('timeout');
    expect(error.message).toMatch(/timed out after 200 ms/);
    expect(error.details.timing?.durationMs).toBeGreaterThanOrEqual(190);
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

describe('host', () => {
  it('is the host of the base URL, and OpenAI’s without one', () => {
    expect(llm.host).toBe(new URL(fake.baseURL).host);
    expect(llm.host).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(new OpenAiLlm({ apiKey: 'sk-secret', model: 'gpt-4o' }).host).toBe('api.openai.com');
    expect(new OpenAiLlm({ apiKey: 'sk-secret', baseURL: 'http://user:pw@localhost:11434/v1', model: 'llama3' }).host).toBe('localhost:11434');
  });
});

describe('the fake server itself', () => {
  const post = (baseURL: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer x', 'content-type': 'application/json' }, path = '/chat/completions') =>
    fetch(`${baseURL}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const events = async (res: Response) => (await res.text()).split('\n\n').filter((e) => e !== '');

  it('streams chat.completion.chunk events ending in [DONE]', async () => {
    fake.script({ content: 'abcdef', chunks: 3 });
    const res = await post(fake.baseURL, { model: 'm', messages: [], stream: true });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const sent = await events(res);
    expect(sent.at(-1)).toBe('data: [DONE]');
    const chunks = sent.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'm' && c.choices[0].index === 0)).toBe(true);
    expect(chunks.map((c) => c.choices[0].delta.content ?? null)).toEqual(['', 'ab', 'cd', 'ef', null]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });

  it('sends usage, when asked, as a last chunk without choices before [DONE]', async () => {
    fake.script({ content: 'abcdef', cachedTokens: 2 });
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } };
    const chunks = (await events(await post(fake.baseURL, body))).slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 8, completion_tokens: tokensOf('abcdef'), total_tokens: 8 + tokensOf('abcdef'), prompt_tokens_details: { cached_tokens: 2 } } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('counts a prompt as OpenAI’s chat format does, roughly', () => {
    // 3 to prime the reply, 3 per message, 1 for "user" and 1 for "hi".
    expect(promptTokens({ messages: [{ role: 'user', content: 'hi' }] })).toBe(8);
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'run', arguments: '{"a":1}' } }] };
    expect(promptTokens({ messages: [call] })).toBe(3 + 3 + tokensOf('assistant') + tokensOf('run') + tokensOf('{"a":1}'));
    const tools = [{ type: 'function', function: { name: 'run', parameters: {} } }];
    expect(promptTokens({ messages: [], tools })).toBe(3 + tokensOf(JSON.stringify(tools)));
    expect(promptTokens({ messages: [{ role: 'user', content: '<|endoftext|>' }] })).toBeGreaterThan(8);
  });

  it('truncates like Ollama: the end of a prompt over the window is kept, the system message dropped first', async () => {
    const messages: LlmMessage[] = [
      { role: 'system', content: 'You are Nomos, the operator of a small Proxmox cluster. '.repeat(10) },
      { role: 'user', content: 'How is pve-1?' },
      { role: 'assistant', content: 'Up for 12 days.' },
      { role: 'user', content: 'And pve-2?' },
    ];
    const window = promptTokens({ messages: messages.slice(1) });
    const { server, client } = await startOther({ window, truncate: 'ollama' });
    const seen: any[][] = [];
    server.respond((request) => {
      seen.push(request.messages);
      return { content: 'pve-2 is down.' };
    });

    const { completion } = await complete(messages, [], undefined, client);
    expect(completion.content).toBe('pve-2 is down.');
    expect(server.requests[0]!.promptTokens).toBe(promptTokens({ messages }));
    expect(server.requests[0]!.messages).toHaveLength(4);
    expect(server.requests[0]!.kept).toBe(3);
    expect(seen[0]!.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(server.reported[0]!.prompt_tokens).toBe(window);
    expect(completion.usage?.inputTokens).toBe(window);

    // One token less and the first user message goes too; a prompt that fits is left whole.
    const tighter = await startOther({ window: window - 1, truncate: 'ollama' });
    tighter.server.script({ content: 'ok' }, { content: 'ok' });
    await complete(messages, [], undefined, tighter.client);
    expect(tighter.server.requests[0]!.kept).toBe(2);
    await complete(USER, [], undefined, tighter.client);
    expect(tighter.server.requests[1]!).not.toHaveProperty('kept');
  });

  it('answers 401 without a bearer token, 404 elsewhere, and 500 once the script is exhausted', async () => {
    const body = { model: 'm', messages: [], stream: true };
    fake.script();
    expect((await post(fake.baseURL, body, {})).status).toBe(401);
    expect((await post(fake.baseURL, body, { authorization: 'Bearer x' }, '/embeddings')).status).toBe(404);
    const exhausted = await post(fake.baseURL, body, { authorization: 'Bearer x' });
    expect(exhausted.status).toBe(500);
    expect(await exhausted.json()).toMatchObject({ error: { message: 'script exhausted' } });
  });

  it('can decide each reply from the request', async () => {
    fake.respond((request, index) => ({ content: `${index}:${request.messages.length}` }));
    expect((await complete()).completion.content).toBe('0:1');
    expect((await complete([...USER, { role: 'assistant', content: 'ok' }])).completion.content).toBe('1:2');
  });
});
