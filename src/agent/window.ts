// The agent's context window and the budget its prompts are fitted to: NOMOS_CONTEXT_TOKENS when set, else the
// model's known window, else DEFAULT_CONTEXT_TOKENS; less a reserve for the answer.
import { DEFAULT_CONTEXT_TOKENS, knownWindow } from './tokens.ts';

export interface ContextWindow {
  readonly windowTokens: number;
  /** Where the window came from: the operator's setting, the table of known models, or the default. */
  readonly source: 'configured' | 'known' | 'default';
  /** Kept free for the model's answer (its tool calls and text). */
  readonly reserveTokens: number;
  /** What a prompt may cost: the window less the reserve. */
  readonly budgetTokens: number;
}

/** An eighth of the window, at least 512 and at most 4 096 tokens. */
const reserveFor = (window: number) => Math.min(4_096, Math.max(512, Math.floor(window / 8)));

export function contextWindow(model: string, configured: number | null): ContextWindow {
  const known = knownWindow(model);
  const [windowTokens, source] = configured !== null ? [configured, 'configured' as const] : known !== null ? [known, 'known' as const] : [DEFAULT_CONTEXT_TOKENS, 'default' as const];
  const reserveTokens = reserveFor(windowTokens);
  return { windowTokens, source, reserveTokens, budgetTokens: windowTokens - reserveTokens };
}

/**
 * The budget after a provider said the prompt did not fit. OpenAI says both its window and what the prompt came to
 * by its own count ("maximum context length is W tokens. However, your messages resulted in N tokens"): its window
 * in our counting is then W × sent/N. With the window alone, that less the reserve; with neither, three quarters of
 * what was sent. Always below what was sent, never above the budget it replaces.
 */
export function tightenedBudget(current: number, sentTokens: number, providerWords: string, reserveTokens: number): number {
  const window = /maximum context length is (\d+)/i.exec(providerWords)?.[1];
  const counted = /resulted in (\d+) tokens/i.exec(providerWords)?.[1];
  let budget = Math.floor(sentTokens * 0.75);
  if (window !== undefined && counted !== undefined && Number(counted) > 0) budget = Math.floor((Number(window) * sentTokens) / Number(counted)) - reserveTokens;
  else if (window !== undefined) budget = Number(window) - reserveTokens;
  return Math.max(256, Math.min(current, sentTokens - 1, budget));
}
