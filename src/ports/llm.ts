// The LLM port: one streamed chat completion with tools. The adapter (src/adapters/llm/openai.ts) speaks
// to any OpenAI-compatible server through the openai SDK; the agent loop only sees this.

export interface LlmToolDef {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments (generated from the tool's zod schema). */
  readonly parameters: Record<string, unknown>;
}

export interface LlmToolCall {
  readonly id: string;
  readonly name: string;
  /** The arguments as the model wrote them: JSON text, possibly malformed. */
  readonly arguments: string;
}

export type LlmMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly toolCalls?: readonly LlmToolCall[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly content: string };

/** Tokens as the provider reported them (its usage chunk); null where it reported none. */
export interface LlmUsage {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  /** Input tokens the provider served from its prompt cache (prompt_tokens_details.cached_tokens). */
  readonly cachedInputTokens: number | null;
}

/** How long a call took, measured by the adapter from the request's start. */
export interface LlmTiming {
  readonly durationMs: number;
  /** Until the first chunk that carried content or a tool call; null when none came. */
  readonly firstTokenMs: number | null;
}

export interface LlmCompletion {
  readonly content: string;
  readonly toolCalls: readonly LlmToolCall[];
  /** The provider's finish reason: stop, tool_calls, length, content_filter… (never null: a stream without one is an LlmProviderError of kind stream_cut). */
  readonly finishReason: string | null;
  /** The provider's own refusal field, when it sets one. */
  readonly refusal: string | null;
  /** The model the provider says answered (its chunks' `model`), else the one asked for. */
  readonly model: string;
  /** null when the provider sent no usage at all. */
  readonly usage: LlmUsage | null;
  readonly timing: LlmTiming;
}

export interface LlmRequest {
  readonly messages: readonly LlmMessage[];
  readonly tools: readonly LlmToolDef[];
  readonly signal?: AbortSignal;
}

export interface LlmClient {
  /** The model asked for, and the host of the provider's base URL (never the key): what the agent records of a call. */
  readonly model: string;
  readonly host: string;
  /** Streams one completion, calling onToken with each content delta; resolves with the whole message. */
  complete(request: LlmRequest, onToken: (text: string) => void): Promise<LlmCompletion>;
}

/**
 * How a call failed: http (the provider answered an error status), stream_cut (the stream ended without a finish
 * reason), timeout (the adapter's deadline), network (no answer: refused, reset), malformed (an answer the
 * adapter cannot use, such as a tool call without an id).
 */
export type LlmFailureKind = 'http' | 'stream_cut' | 'timeout' | 'network' | 'malformed';

/** The provider failed: the agent decides, by kind, status and code, whether and when to try again. */
export class LlmProviderError extends Error {
  readonly code = 'llm_provider_error';
  constructor(
    message: string,
    readonly status: number | null,
    readonly details: {
      readonly kind: LlmFailureKind;
      /** The provider's own error code (error.code or error.type of its body), e.g. context_length_exceeded, rate_limit_exceeded. */
      readonly providerCode?: string | null;
      /** From Retry-After (seconds or an HTTP date) or retry-after-ms, when the provider sent one. */
      readonly retryAfterMs?: number | null;
      readonly timing?: LlmTiming;
    } = { kind: 'network' },
  ) {
    super(message);
    this.name = 'LlmProviderError';
  }

  get kind(): LlmFailureKind {
    return this.details.kind;
  }

  get providerCode(): string | null {
    return this.details.providerCode ?? null;
  }

  get retryAfterMs(): number | null {
    return this.details.retryAfterMs ?? null;
  }

  /** The prompt did not fit the provider's context window (OpenAI's code, and the words other servers use). */
  get contextExceeded(): boolean {
    return this.providerCode === 'context_length_exceeded' || (this.status === 400 && /context (length|window)|maximum context|too many tokens|exceeds? the context/i.test(this.message));
  }
}
