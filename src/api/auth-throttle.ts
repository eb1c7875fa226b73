// Slows down guessing tokens: an address that presented wrong tokens FREE_FAILURES times within WINDOW_MS is
// refused (429, Retry-After) for a time that doubles with each further failure, up to MAX_BLOCK_MS. Kept in this
// process: each `nomos serve` counts on its own (docs/security.md says so); a guesser spread over N servers gets N
// times the tries, still a handful a minute against 32+ character tokens.
import { HttpProblem } from './errors.ts';

export const FREE_FAILURES = 5;
export const WINDOW_MS = 60_000;
export const MAX_BLOCK_MS = 15 * 60_000;
/** Addresses remembered at most; past it the oldest are forgotten first, so a flood of addresses cannot grow memory. */
const MAX_ADDRESSES = 10_000;

interface Tally {
  /** Failures since the window began (or since the last block, which extends the window). */
  failures: number;
  firstAt: number;
  blockedUntil: number;
}

export class AuthThrottle {
  private readonly seen = new Map<string, Tally>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Throws a 429 when `address` is serving a block. */
  check(address: string): void {
    const record = this.seen.get(address);
    const now = this.now();
    if (record === undefined || record.blockedUntil <= now) return;
    const seconds = Math.ceil((record.blockedUntil - now) / 1000);
    throw new HttpProblem(429, 'too_many_failed_authentications', `too many wrong API tokens from ${address}; try again in ${seconds} s`, { retry_after_seconds: seconds });
  }

  /** Counts a wrong token from `address`; past the free ones, blocks it for a time that doubles each time. */
  fail(address: string): void {
    const now = this.now();
    let record = this.seen.get(address);
    if (record === undefined || (now - record.firstAt > WINDOW_MS && record.blockedUntil <= now - WINDOW_MS)) {
      record = { failures: 0, firstAt: now, blockedUntil: 0 };
    }
    record.failures += 1;
    if (record.failures >= FREE_FAILURES) record.blockedUntil = now + Math.min(MAX_BLOCK_MS, 1000 * 2 ** (record.failures - FREE_FAILURES));
    this.seen.delete(address);
    this.seen.set(address, record);
    if (this.seen.size > MAX_ADDRESSES) this.seen.delete(this.seen.keys().next().value!);
  }
}
