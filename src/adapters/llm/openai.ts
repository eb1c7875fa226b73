// The LLM port over any OpenAI-compatible chat-completions server, through the openai SDK. The stream is
// accumulated here rather than with the SDK's helpers so that what the agent sees is exactly what arrived.

import OpenAI, { APIError } from 'openai';
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
  type LlmToolCall,
  type LlmToolDef,
} from '../../ports/llm.ts';

export interface OpenAiLlmOptions {
  readonly apiKey: string;
  readonly baseURL?: string;
  readonly model: string;
  /** Deadline for the whole completion, stream included (the SDK's own timeout stops at the headers). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

export class OpenAiLlm implements LlmClient {
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly timeoutMs: number;

  constructor(options: OpenAiLlmOptions) {
    // No SDK retries: the agent decides whether a failed completion is worth another try. A null baseURL means
    // OpenAI's own, never OPENAI_BASE_URL: configuration arrives through the options only.
    this.client = new OpenAI({ apiKey: options.apiKey, baseURL: options.baseURL ?? null, maxRetries: 0 });
    this.model = options.model;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async complete(request: LlmRequest, onToken: (text: string) => void): Promise<LlmCompletion> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
    // The SDK ends a stream quietly when its signal fires mid-body, so an abort is checked after the loop too.
    const stopped = (): Error | null => {
      if (request.signal?.aborted) return abortReason(request.signal);
      if (deadline.aborted) return new LlmProviderError(`LLM completion timed out after ${this.timeoutMs} ms`, null);
      return null;
    };

    const accumulator = new CompletionAccumulator();
    // A failing onToken is the caller's bug, not the provider's: it must not come back as a retryable error.
    let inCallback = false;
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: this.model,
          messages: request.messages.map(toMessageParam),
          ...(request.tools.length > 0 && { tools: request.tools.map(toToolParam) }),
          stream: true,
        },
        { signal },
      );
      for await (const chunk of stream) {
        const text = accumulator.add(chunk);
        if (text === '') continue;
        inCallback = true;
        onToken(text);
        inCallback = false;
      }
    } catch (error) {
      if (inCallback) throw error;
      throw stopped() ?? toProviderError(error);
    }
    const stop = stopped();
    if (stop) throw stop;
    return accumulator.finish();
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
  private content = '';
  private refusal: string | null = null;
  private finishReason: string | null = null;
  private readonly toolCalls = new Map<number, { id: string; name: string; arguments: string }>();

  /** Returns the content delta the chunk carried ('' when none). */
  add(chunk: ChatCompletionChunk): string {
    // Providers may send chunks without choices (usage, keep-alives) or, with n > 1, other choices: neither is ours.
    const choice = chunk.choices.find((c) => c.index === 0);
    if (choice === undefined) return '';
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
    return text;
  }

  finish(): LlmCompletion {
    const toolCalls: LlmToolCall[] = [...this.toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        // A call the agent cannot answer (no id) or dispatch (no name) is a broken reply, not a tool call.
        if (call.id === '' || call.name === '') {
          throw new LlmProviderError(`tool call ${index} arrived without ${call.id === '' ? 'an id' : 'a name'}`, null);
        }
        return call;
      });
    return { content: this.content, toolCalls, finishReason: this.finishReason, refusal: this.refusal };
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('The operation was aborted.', 'AbortError');
}

function toProviderError(error: unknown): LlmProviderError {
  if (error instanceof LlmProviderError) return error;
  // instanceof leaves APIError's type parameters as any: check the status rather than trust it.
  if (error instanceof APIError) return new LlmProviderError(error.message, typeof error.status === 'number' ? error.status : null);
  return new LlmProviderError(error instanceof Error ? error.message : String(error), null);
}
