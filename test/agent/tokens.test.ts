// Token counts of messages and prompts (o200k), and the context windows of the models we know.
import { describe, expect, it } from 'vitest';
import { countMessageTokens, countPromptTokens, countTextTokens, knownWindow } from '../../src/agent/tokens.ts';
import type { LlmMessage, LlmToolDef } from '../../src/ports/llm.ts';

const TOOL: LlmToolDef = { name: 'run', description: 'Run a command.', parameters: { type: 'object', properties: { command: { type: 'string' } } } };

describe('token counts', () => {
  it('counts text as o200k does, special tokens as plain text', () => {
    expect(countTextTokens('hello world')).toBe(2);
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('<|endoftext|>')).toBeGreaterThan(1);
  });

  it('gives a long text the same count the second time (from the cache)', () => {
    const text = Array.from({ length: 300 }, (_, i) => `line ${i}: drwxr-xr-x root root /var/lib/${i}`).join('\n');
    const first = countTextTokens(text);
    expect(first).toBeGreaterThan(2_000);
    expect(countTextTokens(text.slice(0))).toBe(first);
  });

  it('counts a message as its framing, role and content, and a tool call as its name and arguments', () => {
    expect(countMessageTokens({ role: 'user', content: 'hello world' })).toBe(3 + 1 + 2);
    const call: LlmMessage = { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'run', arguments: '{"command":"df -h"}' }] };
    expect(countMessageTokens(call)).toBe(3 + countTextTokens('assistant') + countTextTokens('run') + countTextTokens('{"command":"df -h"}'));
  });

  it('grows with the content, message by message', () => {
    const sizes = [1, 10, 100, 1000].map((n) => countMessageTokens({ role: 'tool', toolCallId: 'c', content: 'total 0\n'.repeat(n) }));
    expect(sizes[0]).toBeGreaterThan(0);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeGreaterThan(sizes[i - 1]!);
  });

  it('counts a prompt as its messages, the reply priming and the tool definitions', () => {
    const messages: LlmMessage[] = [
      { role: 'system', content: 'You are Nomos.' },
      { role: 'user', content: 'is the backup ok?' },
    ];
    const bare = countPromptTokens(messages, []);
    expect(bare).toBe(countMessageTokens(messages[0]!) + countMessageTokens(messages[1]!) + 3);
    expect(countPromptTokens(messages, [TOOL])).toBe(bare + countTextTokens(JSON.stringify([TOOL])));
    expect(countPromptTokens([...messages, { role: 'assistant', content: 'Yes.' }], [TOOL])).toBeGreaterThan(countPromptTokens(messages, [TOOL]));
  });
});

describe('knownWindow', () => {
  it.each([
    ['gpt-4o', 128_000],
    ['gpt-4o-mini-2024-07-18', 128_000],
    ['openai/gpt-4.1-mini', 1_047_576],
    ['gpt-4', 8_192],
    ['gpt-4-turbo-2024-04-09', 128_000],
    ['gpt-3.5-turbo', 16_385],
    ['o3-mini', 200_000],
    ['o4-mini', 200_000],
    ['llama3:8b', 8_192],
    ['llama3.1:8b', 131_072],
    ['ollama/llama3.2:3b-instruct-q4_K_M', 131_072],
    ['llama3.3', 131_072],
    ['qwen2.5:14b', 32_768],
    ['Qwen/Qwen2.5-7B-Instruct', 32_768],
    ['mistral:7b', 32_768],
    ['gemma2:9b', 8_192],
  ])('%s has a window of %i tokens', (model, window) => {
    expect(knownWindow(model)).toBe(window);
  });

  it('knows nothing of other models', () => {
    expect(knownWindow('my-finetune')).toBeNull();
    expect(knownWindow('')).toBeNull();
  });
});
