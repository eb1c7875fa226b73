// Telling a usable answer from an empty or canned one: blank text, text that is mostly non-ASCII boilerplate
// in an English conversation, or a known canned refusal. Such answers are retried, never shown as a reply.

const CANNED = [/我没有相关信息/, /您可以尝试问我其它问题/, /抱歉，我无法/, /关于这个问题，我没有/, /^I'?m sorry, but I can(?:no|')t (?:help|assist) with that\.?$/i, /^As an AI (?:language )?model\b/i];

export type UnusableAnswer = 'model_empty_response' | 'model_refusal' | null;

export function unusableAnswer(content: string, providerRefusal: string | null): UnusableAnswer {
  if (providerRefusal !== null && providerRefusal.trim() !== '') return 'model_refusal';
  const text = content.trim();
  if (text === '') return 'model_empty_response';
  if (CANNED.some((pattern) => pattern.test(text))) return 'model_refusal';
  let ascii = 0;
  for (const ch of text) if (ch.codePointAt(0)! <= 127) ascii++;
  return ascii * 2 < [...text].length ? 'model_refusal' : null;
}
