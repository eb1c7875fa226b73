// The shape of a classification rule: data with its own proof, so a rule cannot exist without examples that pick it.
import type { Invocation } from './args.ts';
import type { RiskClass } from './risk-class.ts';

export interface Rule {
  readonly id: string;
  readonly class: RiskClass;
  /** Why; a verdict's reason is "<command part>: <reason>". */
  readonly reason: string;
  /** Whole commands that must classify with exactly this rule and class. */
  readonly examples: readonly string[];
  /** Matches one simple command after unwrapping; absent for outcomes the walk decides itself (unparseable, empty, …). */
  readonly match?: (inv: Invocation) => boolean;
  /** For a command the rule matched, what in it decided; the verdict's reason is then "<part>: <reason>: <detail>". */
  readonly detail?: (inv: Invocation) => string | undefined;
}

