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

export interface LlmCompletion {
  readonly content: string;
  readonly toolCalls: readonly LlmToolCall[];
  readonly finishReason: string | null;
  /** The provider's own refusal field, when it sets one. */
  readonly refusal: string | null;
}

export interface LlmRequest {
  readonly messages: readonly LlmMessage[];
  readonly tools: readonly LlmToolDef[];
  readonly signal?: AbortSignal;
}

export interface LlmClient {
  /** Streams one completion, calling onToken with each content delta; resolves with the whole message. */
  complete(request: LlmRequest, onToken: (text: string) => void): Promise<LlmCompletion>;
}

/** The provider failed (HTTP error, broken stream): the agent retries once with backoff, then gives up. */
export class LlmProviderError extends Error {
  readonly code = 'llm_provider_error';
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'LlmProviderError';
  }
}
