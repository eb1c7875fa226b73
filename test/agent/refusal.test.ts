import { describe, expect, it } from 'vitest';
import { unusableAnswer } from '../../src/agent/refusal.ts';

describe('unusableAnswer', () => {
  it.each([
    ['', null, 'model_empty_response'],
    ['   \n ', null, 'model_empty_response'],
    ['抱歉，我无法回答这个问题。您可以尝试问我其它问题。', null, 'model_refusal'],
    ["I'm sorry, but I can't help with that.", null, 'model_refusal'],
    ['Sure.', 'I cannot do that', 'model_refusal'],
    ['The container runs out of memory; raising it to 4 GiB.', null, null],
    ['Die Sicherung läuft wieder — alles gut.', null, null],
    ['Done ✅ — the timer is active.', null, null],
  ] as const)('%j (refusal field %j) → %s', (content, refusal, expected) => {
    expect(unusableAnswer(content, refusal)).toBe(expected);
  });
});
