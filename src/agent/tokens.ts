// How many tokens a prompt costs, estimated with OpenAI's o200k encoding (other models' tokenizers differ by some
// tens of percent: budgets need a reserve), and the context windows of models we know.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { LlmMessage, LlmToolDef } from '../ports/llm.ts';

/** The window assumed for a model that is not in the table below. */
export const DEFAULT_CONTEXT_TOKENS = 32_000;

/** Each message's framing (role markers, separators), as OpenAI's counting guide puts it. */
const PER_MESSAGE = 3;
/** The priming of the reply (`<|start|>assistant<|message|>`). */
const REPLY_PRIMING = 3;

// The fitter counts every message of a session, and every line of its digest, before every model call, and the
// same texts come back each time: each is counted once. The shortest cost less to count than to keep; the cache
// holds at most CACHE_CHARS characters of text, the oldest entries leaving first.
const CACHED_FROM_CHARS = 32;
const CACHE_CHARS = 8_000_000;
const counted = new Map<string, number>();
let cachedChars = 0;

// Text from hosts may hold `<|endoftext|>` and the like: it is counted as plain text, never refused.
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export function countTextTokens(text: string): number {
  if (text.length < CACHED_FROM_CHARS) return countTokens(text, AS_PLAIN_TEXT);
  const known = counted.get(text);
  if (known !== undefined) return known;
  const tokens = countTokens(text, AS_PLAIN_TEXT);
  // A Map iterates in insertion order: the first key is the oldest.
  for (const oldest of counted.keys()) {
    if (cachedChars + text.length <= CACHE_CHARS) break;
    counted.delete(oldest);
    cachedChars -= oldest.length;
  }
  if (text.length <= CACHE_CHARS) {
    counted.set(text, tokens);
    cachedChars += text.length;
  }
  return tokens;
}

export function countMessageTokens(message: LlmMessage): number {
  let tokens = PER_MESSAGE + countTextTokens(message.role) + countTextTokens(message.content ?? '');
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) tokens += countTextTokens(call.name) + countTextTokens(call.arguments);
  }
  return tokens;
}

/** The whole request: its messages, the reply's priming and the tool definitions (as JSON, a fair stand-in for how servers render them). */
export function countPromptTokens(messages: readonly LlmMessage[], tools: readonly LlmToolDef[]): number {
  let tokens = REPLY_PRIMING + (tools.length > 0 ? countTextTokens(JSON.stringify(tools)) : 0);
  for (const message of messages) tokens += countMessageTokens(message);
  return tokens;
}

// By prefix of the bare model name; the longest matching prefix wins (gpt-4o before gpt-4, llama3.1 before llama3).
// The window is the model's own: a server may run it with less (Ollama's num_ctx), which only its operator knows.
const WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ['gpt-5', 400_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-4-32k', 32_768],
  ['gpt-4', 8_192],
  ['gpt-3.5-turbo', 16_385],
  ['o1-mini', 128_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['gpt-oss', 131_072],
  ['llama3.1', 131_072],
  ['llama3.2', 131_072],
  ['llama3.3', 131_072],
  ['llama3', 8_192],
  ['qwen2.5', 32_768],
  ['qwen3', 40_960],
  ['mistral-nemo', 131_072],
  ['mistral', 32_768],
  ['gemma2', 8_192],
  ['gemma3', 131_072],
  ['phi4', 16_384],
];
const BY_LONGEST_PREFIX = [...WINDOWS].sort((a, b) => b[0].length - a[0].length);

/** The context window of a model we know, matched on its bare name (no `openai/` provider, no `:8b` tag); null if unknown. */
export function knownWindow(model: string): number | null {
  const bare = model.trim().toLowerCase().replace(/^.*\//, '').replace(/:.*$/, '');
  return BY_LONGEST_PREFIX.find(([prefix]) => bare.startsWith(prefix))?.[1] ?? null;
}
