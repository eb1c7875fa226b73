// Policy suggestions: the approvals decided in the log read once, each command judged once (kept judgements first,
// else through the classifier port), grouped into allow rules by the pure core (src/domain/policy/suggest.ts), each rule loaded
// beside the policy in force — one that does not load is never offered — and tried with the what-if
// (src/commands/policy-what-if.ts).
import { z } from 'zod';
import { type DecidedApproval, type PolicyRule, type SuggestionEvidence, type WhatIfResult, loadPolicy, suggestRules } from '../domain/policy/index.ts';
import type { CommandClassifier } from '../ports/classifier.ts';
import type { Queryable } from '../ports/db.ts';
import type { CommandDeps } from './context.ts';
import { currentPolicy } from './policy.ts';
import { DEFAULT_CONCURRENCY, judgementsOf, whatIf } from './policy-what-if.ts';

/** Suggestions answered at most: each carries a what-if over the whole log. */
export const MAX_SUGGESTIONS = 50;
export const DEFAULT_SUGGESTIONS = 20;
/** Executions each suggestion's what-if lists per change: its counts say the rest. */
const SAMPLES = 5;

export interface PolicySuggestion {
  readonly rule: PolicyRule;
  readonly evidence: SuggestionEvidence;
  /** The what-if of the policy in force with this rule added. */
  readonly what_if: WhatIfResult;
}

const DecidedRow = z.object({
  command: z.string(),
  target: z.string(),
  session_id: z.string(),
  status: z.enum(['granted', 'denied', 'expired']),
  outcome: z.string().nullable(),
  wait_s: z.coerce.number().nullable(),
  session_deleted: z.boolean(),
});

/** Every approval an operator decided or let expire, with how its execution ended and how long the grant took. */
async function decidedApprovals(db: Queryable): Promise<DecidedApproval[]> {
  const { rows } = await db.query(
    `SELECT a.command, a.target, a.session_id, a.status, e.status AS outcome, a.session_deleted,
            CASE WHEN a.status = 'granted' THEN EXTRACT(EPOCH FROM a.decided_at - a.requested_at)::float8 END AS wait_s
       FROM approvals a LEFT JOIN executions e ON e.id = a.execution_id
      WHERE a.status IN ('granted', 'denied', 'expired')
      ORDER BY a.requested_at, a.id`,
  );
  return rows.map((row) => DecidedRow.parse(row));
}

/** The suggestions, the most approved first, at most `limit`. */
export async function policySuggestions(
  deps: Pick<CommandDeps, 'readDb' | 'store'>,
  classifier: CommandClassifier,
  options: { readonly minApprovals: number; readonly limit: number },
): Promise<{ suggestions: PolicySuggestion[] }> {
  const [approvals, current] = await Promise.all([decidedApprovals(deps.readDb), currentPolicy(deps)]);
  // Each distinct command judged once, from the what-if's kept judgements where it can (run keeps each it judges).
  const judged = await judgementsOf(deps.readDb, classifier, [...new Set(approvals.map((a) => a.command))], DEFAULT_CONCURRENCY);
  const inForce = current?.policy.rules ?? [];
  const suggestions: PolicySuggestion[] = [];
  for (const { rule, evidence } of suggestRules(approvals, (command) => judged.get(command), current?.policy ?? null, options)) {
    if (suggestions.length >= options.limit) break;
    const loaded = loadPolicy({ rules: [...inForce, rule] });
    if (!loaded.ok) continue;
    const tried = await whatIf(deps, classifier, loaded.policy, { samples: SAMPLES });
    // The last word is the what-if's, over every execution and not the approvals alone: a rule that would let run a
    // command once denied, or one whose run failed or timed out (under an assent window, an earlier policy), is not offered.
    if (tried.flag_counts.allowed_once_denied > 0 || tried.flag_counts.allowed_once_failed > 0) continue;
    suggestions.push({ rule, evidence, what_if: tried });
  }
  return { suggestions };
}
