// What model calls cost, from the operator's prices (NOMOS_MODEL_PRICES: per model, per million tokens). Pure:
// the read models keep tokens, and a cost is priced as it is read, so a changed price never rewrites history.
import { z } from 'zod';

const PerMillion = z.number().nonnegative().finite();

/** One model's prices per million tokens; cached input costs as input unless priced apart. */
export const ModelPrice = z.strictObject({ input: PerMillion, output: PerMillion, cached_input: PerMillion.optional() });
export type ModelPrice = z.infer<typeof ModelPrice>;

export const ModelPrices = z.record(z.string().min(1).max(200), ModelPrice);
export type ModelPrices = z.infer<typeof ModelPrices>;

export interface Tokens {
  readonly input_tokens: number | null;
  readonly output_tokens: number | null;
  readonly cached_input_tokens: number | null;
}

/**
 * The cost of a model's tokens, or null when the model has no price. Cached input tokens are part of the input
 * tokens (as OpenAI reports them) and priced at the cached rate.
 */
export function costOf(prices: ModelPrices, model: string, tokens: Tokens): number | null {
  const price = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (price === undefined) return null;
  const input = tokens.input_tokens ?? 0;
  const cached = Math.min(tokens.cached_input_tokens ?? 0, input);
  const micro = (input - cached) * price.input + cached * (price.cached_input ?? price.input) + (tokens.output_tokens ?? 0) * price.output;
  return Math.round(micro) / 1e6;
}

/** The cost of several models' tokens: null when any of them has no price (a partial sum would understate it). */
export function costOfAll(prices: ModelPrices, rows: ReadonlyArray<Tokens & { readonly model: string }>): number | null {
  let total = 0;
  for (const row of rows) {
    const cost = costOf(prices, row.model, row);
    if (cost === null) return null;
    total += cost;
  }
  return Math.round(total * 1e6) / 1e6;
}
