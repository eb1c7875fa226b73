// A scripted OpenAI-compatible server on 127.0.0.1 for the LLM adapter and the agent's tests: it speaks the
// chat-completions streaming protocol (server-sent chunks, an optional usage chunk, then [DONE]) so the real openai
// SDK can talk to it, and it can imitate a context window: OpenAI's 400 or Ollama's silent truncation.

import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/** A tool call to stream: `arguments` are JSON-stringified, `rawArguments` sent verbatim (to send malformed JSON). */
export type ScriptedToolCall = { id?: string; name: string } & ({ arguments: unknown } | { rawArguments: string });

export type ScriptedReply =
  /** Streamed text, split into `chunks` content deltas (default 3), then `finishReason` (default 'stop'; 'length' or 'content_filter' for a reply the provider cut short). */
  | { content: string; chunks?: number; delayMs?: number; finishReason?: string; cachedTokens?: number }
  /** Tool-call deltas (arguments split across several deltas), finish_reason 'tool_calls'. */
  | { toolCalls: ScriptedToolCall[]; content?: string; delayMs?: number; cachedTokens?: number }
  /** An HTTP error response with OpenAI's body {error: {message, type, param, code}}, and the Retry-After / retry-after-ms headers when given. */
  | { status: number; error?: string; code?: string; type?: string; retryAfter?: string; retryAfterMs?: string }
  /** Streams `content`, then ends the response without a finish reason and without [DONE], as a dropped upstream does. */
  | { cut: true; content?: string }
  /** Sends the first chunk, then stalls until the client goes away or the server closes. */
  | { hangMs: number };

export interface FakeRequest {
  model: string;
  messages: any[];
  tools?: any[];
  /** The body's stream_options as sent, e.g. {include_usage: true}. */
  streamOptions: { include_usage?: boolean } | undefined;
  /** promptTokens() of the request as sent. */
  promptTokens: number;
  /** Set when truncate 'ollama' dropped messages: how many, from the end, the model was given. */
  kept?: number;
}

/** A usage the server sent, as it sent it. */
export interface ReportedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

export interface FakeOpenAiOptions {
  /** The model's context window in promptTokens(): a request over it is answered with OpenAI's context_length_exceeded 400, the script left as it was. */
  window?: number;
  /** Instead of that 400, keep only the end of the prompt (messages dropped from the start) and answer anyway, as Ollama does. */
  truncate?: 'ollama';
  /** By default usage comes, when asked for, in a last chunk without choices, as OpenAI sends it. 'with-finish': on the finish chunk instead, as some other servers do; false: never. */
  usage?: false | 'with-finish';
  /** The model the chunks name; by default the one the request asked for. OpenAI names the dated snapshot behind an alias. */
  answerAs?: string;
}

export interface FakeOpenAi {
  /** e.g. http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  /** Requests received so far (the parsed JSON bodies), for asserting what context the agent sent. */
  readonly requests: FakeRequest[];
  /** Every usage the server sent, in order, so that tests can check what the agent added up. */
  readonly reported: ReportedUsage[];
  /** Replies are served in order; when the script runs out, the server answers 500 "script exhausted". */
  script(...replies: ScriptedReply[]): void;
  /** Or a function deciding each reply from the request (its messages are those the model was given, after any truncation); index counts the requests since respond() was called. */
  respond(fn: (request: { messages: any[]; tools?: any[] }, index: number) => ScriptedReply): void;
  close(): Promise<void>;
}

const MODEL_FALLBACK = 'fake-model';

/** Text may hold special-token lookalikes such as <|endoftext|>: like the API, count them as plain text. */
const tokens = (text: string): number => countTokens(text, { disallowedSpecial: new Set() });

/**
 * The prompt's size in o200k tokens, counted roughly as OpenAI's chat format does: per message 3 tokens, its role and
 * content and its tool calls' names and arguments; 3 more that prime the reply; and the tools' JSON.
 */
export function promptTokens(body: { messages?: unknown; tools?: unknown }): number {
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  let total = 3;
  for (const message of messages) {
    total += 3 + tokens(String(message?.role ?? '')) + tokens(asText(message?.content));
    for (const call of Array.isArray(message?.tool_calls) ? message.tool_calls : []) {
      total += tokens(asText(call?.function?.name)) + tokens(asText(call?.function?.arguments));
    }
  }
  if (body.tools !== undefined) total += tokens(JSON.stringify(body.tools));
  return total;
}

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
  const requests: FakeRequest[] = [];
  const reported: ReportedUsage[] = [];
  let queue: ScriptedReply[] = [];
  let decide: ((request: FakeRequest, index: number) => ScriptedReply) | null = null;
  let decided = 0;
  let served = 0;
  /** Open responses, so close() can end hanging streams instead of waiting for them. */
  const open = new Set<ServerResponse>();

  const nextReply = (request: FakeRequest): ScriptedReply =>
    decide ? decide(request, decided++) : (queue.shift() ?? { status: 500, error: 'script exhausted' });

  const server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, { message: `fake server: ${String(error)}` });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return sendError(res, 404, { message: `no route ${req.method} ${req.url}` });
    if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) return sendError(res, 401, { message: 'missing bearer token' });
    let body: any;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return sendError(res, 400, { message: 'body is not JSON' });
    }
    if (body?.stream !== true) return sendError(res, 400, { message: 'the fake only streams: send stream: true' });
    const request: FakeRequest = {
      model: body.model,
      messages: body.messages,
      ...(body.tools !== undefined && { tools: body.tools }),
      streamOptions: body.stream_options,
      promptTokens: promptTokens(body),
    };
    requests.push(request);

    let given = request;
    if (options.window !== undefined && request.promptTokens > options.window) {
      if (options.truncate !== 'ollama') return sendError(res, 400, contextExceeded(options.window, request.promptTokens));
      const messages = keepEnd(request, options.window);
      request.kept = messages.length;
      given = { ...request, messages, promptTokens: promptTokens({ messages, tools: request.tools }) };
    }
    const usage = options.usage !== false && body.stream_options?.include_usage === true
      ? { promptTokens: given.promptTokens, withFinish: options.usage === 'with-finish' }
      : null;
    const sent = await serve(res, nextReply(given), { model: options.answerAs ?? (typeof body.model === 'string' ? body.model : MODEL_FALLBACK), serial: served++, usage });
    if (sent !== null) reported.push(sent);
  }

  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    reported,
    script(...replies) {
      decide = null;
      queue = [...replies];
    },
    respond(fn) {
      decide = fn;
      decided = 0;
      queue = [];
    },
    async close() {
      for (const res of open) res.destroy();
      await new Promise<void>((ok, fail) => server.close((error) => (error ? fail(error) : ok())));
    },
  };
}

/** The longest tail of the messages that fits the window (at least the last message), tools included in the count. */
function keepEnd(request: FakeRequest, window: number): any[] {
  for (let start = 0; start < request.messages.length - 1; start++) {
    const messages = request.messages.slice(start);
    if (promptTokens({ messages, tools: request.tools }) <= window) return messages;
  }
  return request.messages.slice(-1);
}

/** OpenAI's own words and error shape for a prompt over the window. */
function contextExceeded(window: number, asked: number): ErrorBody {
  return {
    message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${asked} tokens. Please reduce the length of the messages.`,
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  };
}

interface ServeContext {
  model: string;
  /** Only makes ids unique across the server's life. */
  serial: number;
  /** Set when the request asked for usage and the server reports it. */
  usage: { promptTokens: number; withFinish: boolean } | null;
}

/** Answers one request with the reply; resolves with the usage it reported, if it got that far. */
async function serve(res: ServerResponse, reply: ScriptedReply, { model, serial, usage }: ServeContext): Promise<ReportedUsage | null> {
  if ('status' in reply) {
    const headers: OutgoingHttpHeaders = {
      ...(reply.retryAfter !== undefined && { 'retry-after': reply.retryAfter }),
      ...(reply.retryAfterMs !== undefined && { 'retry-after-ms': reply.retryAfterMs }),
    };
    const error = { message: reply.error ?? `scripted ${reply.status}`, code: reply.code ?? null, ...(reply.type !== undefined && { type: reply.type }) };
    sendError(res, reply.status, error, headers);
    return null;
  }

  const id = `chatcmpl-fake-${serial}`;
  const created = Math.floor(Date.now() / 1000);
  const write = (chunk: Record<string, unknown>): void => {
    if (res.destroyed) return; // the client hung up mid-script
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...chunk })}\n\n`);
  };
  // Like the API once usage is asked for: every chunk carries usage, null but on the one that reports it.
  const send = (delta: Record<string, unknown>, finishReason: string | null = null, usageReport: ReportedUsage | null = null): void =>
    write({ choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...(usage && { usage: usageReport && toWire(usageReport) }) });
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });

  if ('hangMs' in reply) {
    send({ role: 'assistant', content: '' });
    await sleep(reply.hangMs, res);
    if (!res.destroyed) res.destroy();
    return null;
  }

  const delayMs = 'delayMs' in reply ? (reply.delayMs ?? 0) : 0;
  const pace = async (): Promise<void> => {
    if (delayMs > 0) await sleep(delayMs, res);
  };
  /** What the model "generated", for completion_tokens. */
  const generated: string[] = [];
  const stream = async (text: string, pieces: number): Promise<void> => {
    generated.push(text);
    for (const piece of split(text, pieces)) {
      await pace();
      send({ content: piece });
    }
  };
  send({ role: 'assistant', content: '' });

  if ('cut' in reply) {
    await stream(reply.content ?? '', 3);
    if (!res.destroyed) res.end();
    return null;
  }
  let finishReason: string;
  if ('toolCalls' in reply) {
    await stream(reply.content ?? '', 2);
    for (const [i, call] of reply.toolCalls.entries()) {
      // Like the real API: id, type and name first with empty arguments, then the arguments in pieces.
      await pace();
      send({ tool_calls: [{ index: i, id: call.id ?? `call_fake_${serial}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] });
      const args = 'rawArguments' in call ? call.rawArguments : JSON.stringify(call.arguments);
      generated.push(args);
      for (const piece of split(args, 3)) {
        await pace();
        send({ tool_calls: [{ index: i, function: { arguments: piece } }] });
      }
    }
    finishReason = 'tool_calls';
  } else {
    await stream(reply.content, reply.chunks ?? 3);
    finishReason = reply.finishReason ?? 'stop';
  }

  const report = usage && {
    prompt_tokens: usage.promptTokens,
    completion_tokens: generated.reduce((sum, text) => sum + tokens(text), 0),
    cached_tokens: reply.cachedTokens ?? 0,
  };
  send({}, finishReason, usage?.withFinish ? report : null);
  if (report && !usage?.withFinish) write({ choices: [], usage: toWire(report) });
  if (res.destroyed) return null;
  res.end('data: [DONE]\n\n');
  return report;
}

function toWire({ prompt_tokens, completion_tokens, cached_tokens }: ReportedUsage): Record<string, unknown> {
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens, prompt_tokens_details: { cached_tokens } };
}

interface ErrorBody {
  message: string;
  type?: string;
  param?: string | null;
  code?: string | null;
}

function sendError(res: ServerResponse, status: number, error: ErrorBody, headers: OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'fake_error', param: null, code: null, ...error } }));
}

/** Splits text into at most n non-empty pieces of near-equal length (none for ''). */
function split(text: string, n: number): string[] {
  const chars = [...text];
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, n)));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => ok(Buffer.concat(parts).toString('utf8')));
    req.on('error', fail);
  });
}

/** Waits ms, or less if the client hangs up first. */
function sleep(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((ok) => {
    const timer = setTimeout(done, ms);
    res.once('close', done);
    function done(): void {
      clearTimeout(timer);
      res.off('close', done);
      ok();
    }
  });
}
