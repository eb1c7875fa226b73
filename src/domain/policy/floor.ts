// The floor no policy lowers: an allow rule never covers a command the classifier judges destructive, or one that
// runs code it cannot see. Such a command is asked however the policy is written.
import type { RiskClass } from '../risk/index.ts';

/**
 * The classifier's rules (and the verdicts its worker pool gives in their place) meaning that what runs is not known
 * from the command line: code from elsewhere, a shell that may read the text differently, a wrapper whose program is
 * in doubt, text the classifier could not read in time or at all. Most are destructive already; naming them keeps
 * the floor if a class changes. `opaque-wrapper` is not here: it wraps nothing to follow (a tunnel, `sudo -v`).
 */
export const FLOOR_RULES: ReadonlySet<string> = new Set([
  'opaque-code',
  // An argument known only at run time where an option may run a program (sort --compress-program=$X, a name
  // find -exec or xargs -I puts there).
  'dynamic-option',
  'wrapper-option',
  'unparseable',
  'too-complex',
  'nesting-too-deep',
  'dialect-alias',
  'dialect-arithmetic',
  'dialect-arithmetic-names',
  'dialect-brace',
  'dialect-builtin',
  'dialect-comment',
  'dialect-function',
  'dialect-quoting',
  'dialect-trap',
  // Given by the classifier's worker pool (src/adapters/classifier-pool.ts) instead of a verdict.
  'too-slow',
  'classifier-failed',
]);

/** True when a verdict, or one part of it, is below the floor. */
export const belowFloor = (judged: { readonly risk_class: RiskClass; readonly rule: string }): boolean =>
  judged.risk_class === 'destructive' || FLOOR_RULES.has(judged.rule);
