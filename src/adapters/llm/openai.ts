// The LLM port over any OpenAI-compatible chat-completions server, through the openai SDK. The stream is
// accumulated here rather than with the SDK's helpers so that what the agent sees is exactly what arrived, and
// every failure leaves as an LlmProviderError whose kind, status and provider code let the agent decide on a retry.

import OpenAI, { APIConnectionError, APIError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import {
  type LlmClient,
  type LlmCompletion,
  type LlmMessage,
  LlmProviderError,
  type LlmRequest,
  type LlmTiming,
  type LlmToolCall,
  type LlmToolDef,
  type LlmUsage,
} from '../../ports/llm.ts';

export interface OpenAiLlmOptions {
  readonly apiKey: string;
  readonly baseURL?: string;
  readonly model: string;
  /** Deadline for the whole completion, stream included (the SDK's own timeout stops at the headers). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export class OpenAiLlm implements LlmClient {
  readonly model: string;
  readonly host: string;
  private readonly client: OpenAI;
  private readonly timeoutMs: number;

  constructor(options: OpenAiLlmOptions) {
    // No SDK retries: the agent decides whether a failed completion is worth another try. A null baseURL means
    // OpenAI's own, never OPENAI_BASE_URL: configuration arrives through the options only.
    this.client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL ?? null, maxRetries: 0 });
    this.model = options.model;
    this.host = new URL(options.baseURL ?? OPENAI_BASE_URL).host;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async complete(request: LlmRequest, onToken: (text: string) => void): Promise<LlmCompletion> {
    const started = performance.now();
    let firstTokenMs: number | null = null;
    const timing = (): LlmTiming => ({ durationMs: Math.round(performance.now() - started), firstTokenMs });

    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
    // The SDK ends a stream quietly when its signal fires mid-body, so an abort is checked after the loop too.
    const stopped = (): Error | null => {
      if (request.signal?.aborted) return abortReason(request.signal);
      if (deadline.aborted) {
        return new LlmProviderError(`LLM completion timed out after ${this.timeoutMs} ms`, null, { kind: 'timeout', timing: timing() });
      }
      return null;
    };

    const accumulator = new CompletionAccumulator(this.model);
    // A failing onToken is the caller's bug, not the provider's: it must not come back as a retryable error.
    let inCallback = false;
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: this.model,
          messages: request.messages.map(toMessageParam),
          ...(request.tools.length > 0 && { tools: request.tools.map(toToolParam) }),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal },
      );
      for await (const chunk of stream) {
        const { text, carried } = accumulator.add(chunk);
        if (carried && firstTokenMs === null) firstTokenMs = Math.round(performance.now() - started);
        if (text === '') continue;
        inCallback = true;
        onToken(text);
        inCallback = false;
      }
    } catch (error) {
      if (inCallback) throw error;
      throw stopped() ?? toProviderError(error, timing());
    }
    const stop = stopped();
    if (stop) throw stop;
    return accumulator.finish(timing());
  }
}

function toMessageParam(message: LlmMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls !== undefined && message.toolCalls.length > 0 && {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default: {
      const never: never = message;
      throw new Error(`unknown message role: ${JSON.stringify(never)}`);
    }
  }
}

function toToolParam(tool: LlmToolDef): ChatCompletionFunctionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** Folds the chunks of choice 0 into one message; tool calls arrive by index, id and name first, arguments in pieces. */
class CompletionAccumulator {
  private chunks = 0;
  private content = '';
  private refusal: string | null = null;
  private finishReason: string | null = null;
  private usage: LlmUsage | null = null;
  private readonly toolCalls = new Map<number, { id: string; name: string; arguments: string }>();

  /** `model` stands until a chunk names the model that answered. */
  constructor(private model: string) {}

  /** Returns the content delta the chunk carried ('' when none), and whether it carried any of the message at all. */
  add(chunk: ChatCompletionChunk): { text: string; carried: boolean } {
    this.chunks++;
    if (chunk.model) this.model = chunk.model;
    // OpenAI sends usage on a last chunk without choices; some servers put it on the last choice chunk instead.
    if (chunk.usage) this.usage = toUsage(chunk.usage);
    // Chunks without choices (usage, keep-alives) or, with n > 1, of other choices carry nothing of ours.
    const choice = chunk.choices.find((c) => c.index === 0);
    if (choice === undefined) return { text: '', carried: false };
    const { delta } = choice;
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    if (delta.refusal) this.refusal = (this.refusal ?? '') + delta.refusal;
    for (const part of delta.tool_calls ?? []) {
      const call = this.toolCalls.get(part.index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name = part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      this.toolCalls.set(part.index, call);
    }
    const text = delta.content ?? '';
    this.content += text;
    return { text, carried: text !== '' || Boolean(delta.refusal) || (delta.tool_calls?.length ?? 0) > 0 };
  }

  finish(timing: LlmTiming): LlmCompletion {
    if (this.finishReason === null) {
      throw new LlmProviderError(`the provider's stream ended without a finish reason after ${this.chunks} chunks`, null, { kind: 'stream_cut', timing });
    }
    const toolCalls: LlmToolCall[] = [...this.toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        // A call the agent cannot answer (no id) or dispatch (no name) is a broken reply, not a tool call.
        if (call.id === '' || call.name === '') {
          throw new LlmProviderError(`tool call ${index} arrived without ${call.id === '' ? 'an id' : 'a name'}`, null, { kind: 'malformed', timing });
        }
        return call;
      });
    return { content: this.content, toolCalls, finishReason: this.finishReason, refusal: this.refusal, model: this.model, usage: this.usage, timing };
  }
}

function toUsage(usage: NonNullable<ChatCompletionChunk['usage']>): LlmUsage {
  // Servers that imitate the API leave fields out or null: a missing figure is unknown, not zero.
  const count = (value: unknown): number | null => (typeof value === 'number' ? value : null);
  return {
    inputTokens: count(usage.prompt_tokens),
    outputTokens: count(usage.completion_tokens),
    cachedInputTokens: count(usage.prompt_tokens_details?.cached_tokens),
  };
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('The operation was aborted.', 'AbortError');
}

function toProviderError(error: unknown, timing: LlmTiming): LlmProviderError {
  if (error instanceof LlmProviderError) return error;
  // APIConnectionError is an APIError without a status: no answer came.
  if (error instanceof APIConnectionError) return new LlmProviderError(error.message, null, { kind: 'network', timing });
  if (error instanceof APIError) {
    // An error status, or an error object the server sent inside the stream (no status then). instanceof leaves
    // APIError's type parameters as any: check what the fields hold rather than trust them.
    const status = typeof error.status === 'number' ? error.status : null;
    const providerCode = [error.code, error.type].find((value): value is string => typeof value === 'string') ?? null;
    const headers: unknown = error.headers;
    const retryAfterMs = headers instanceof Headers ? retryAfter(headers) : null;
    return new LlmProviderError(error.message, status, { kind: 'http', providerCode, retryAfterMs, timing });
  }
  // The SDK rethrows JSON.parse's SyntaxError for a chunk that is not JSON; anything else broke the connection.
  if (error instanceof SyntaxError) return new LlmProviderError(`the provider sent a chunk that is not JSON: ${error.message}`, null, { kind: 'malformed', timing });
  return new LlmProviderError(error instanceof Error ? error.message : String(error), null, { kind: 'network', timing });
}

/** The wait the provider asked for: retry-after-ms, else Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
function retryAfter(headers: Headers): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const value = headers.get('retry-after');
  if (value === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}
