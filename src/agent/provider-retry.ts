// Whether, and when, a failed model call is tried again: by how it failed, and how often it already has in this
// call. Pure; the agent records every try and says in the turn's failure what the provider last said.
//
//   429 (rate limited)        up to 4 more tries, after the provider's Retry-After (else 1, 2, 4, 8 s); a wait
//                             over MAX_WAIT_MS is not waited: the turn fails with the provider's words
//   5xx                       up to 2 more tries, after Retry-After (else 0.5, 1 s)
//   context_length_exceeded   once more, with a tighter budget (the agent's)
//   stream cut, network, timeout, malformed answer   once more, after 0.5 s
//   any other 4xx             not again: the request itself is wrong (a key, a model name)
import type { LlmFailureKind } from '../ports/llm.ts';

export interface ProviderFailure {
  readonly kind: LlmFailureKind;
  readonly status: number | null;
  readonly contextExceeded: boolean;
  readonly retryAfterMs: number | null;
}

/** The longest a turn waits for one retry; a provider asking for more is answered by failing the turn. */
export const MAX_WAIT_MS = 30_000;

const RATE_LIMIT_RETRIES = 4;
const SERVER_ERROR_RETRIES = 2;
const BASE_MS = 500;

/** The wait before the next try, or null: the failures so far (the last is the newest) end the call. */
export function nextTry(failures: readonly ProviderFailure[]): { waitMs: number } | null {
  const last = failures.at(-1);
  if (last === undefined) return null;
  const alike = failures.filter((f) => sameClass(f, last)).length;
  if (last.contextExceeded) return alike === 1 ? { waitMs: 0 } : null;
  if (last.status === 429) return wait(last, alike, RATE_LIMIT_RETRIES, 1_000);
  if (last.status !== null && last.status >= 500) return wait(last, alike, SERVER_ERROR_RETRIES, BASE_MS);
  if (last.status !== null) return null;
  return alike === 1 ? { waitMs: BASE_MS } : null;
}

function wait(last: ProviderFailure, alike: number, retries: number, firstMs: number): { waitMs: number } | null {
  if (alike > retries) return null;
  const waitMs = last.retryAfterMs ?? firstMs * 2 ** (alike - 1);
  return waitMs > MAX_WAIT_MS ? null : { waitMs };
}

/** Failures counted together: the same status, or the same kind when there is none. */
function sameClass(a: ProviderFailure, b: ProviderFailure): boolean {
  if (a.contextExceeded || b.contextExceeded) return a.contextExceeded === b.contextExceeded;
  if (a.status !== null || b.status !== null) return a.status === b.status || (a.status !== null && b.status !== null && a.status >= 500 && b.status >= 500);
  return a.kind === b.kind;
}
