// Policy suggestions: the approvals decided in the log read once, each command read once through the classifier
// port, grouped into allow rules by the pure core (src/domain/policy/suggest.ts), each rule loaded
// beside the policy in force — one that does not load is never offered — and tried with the what-if
// (src/commands/policy-what-if.ts).
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { z } from 'zod';
import { type CommandJudgement, type DecidedApproval, type PolicyRule, type SuggestionEvidence, type WhatIfResult, loadPolicy, suggestRules } from '../domain/policy/index.ts';
import type { CommandClassifier } from '../ports/classifier.ts';
import type { Queryable } from '../ports/db.ts';
import type { CommandDeps } from './context.ts';
import { currentPolicy } from './policy.ts';
import { whatIf } from './policy-what-if.ts';

/** Suggestions answered at most: each carries a what-if over the whole log. */
export const MAX_SUGGESTIONS = 50;
export const DEFAULT_SUGGESTIONS = 20;
/** Executions each suggestion's what-if lists per change: its counts say the rest. */
const SAMPLES = 5;
const JUDGED_AT_ONCE = 50;

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

/**
 * Each distinct command read once, as `run` reads it today; one not read in time has no parts and counts as below
 * the floor. Short commands are judged inline: the event loop is given back between batches.
 */
async function readings(classifier: CommandClassifier, commands: readonly string[]): Promise<Map<string, CommandJudgement>> {
  const distinct = [...new Set(commands)];
  const read = new Map<string, CommandJudgement>();
  for (let i = 0; i < distinct.length; i += JUDGED_AT_ONCE) {
    const batch = distinct.slice(i, i + JUDGED_AT_ONCE);
    const judged = await Promise.all(batch.map((command) => classifier.judge({ command, parts: true })));
    batch.forEach((command, j) => read.set(command, { verdict: judged[j]!.verdict, parts: judged[j]!.parts ?? [] }));
    await yieldToLoop();
  }
  return read;
}

/** The suggestions, the most approved first, at most `limit`. */
export async function policySuggestions(
  deps: Pick<CommandDeps, 'readDb' | 'store'>,
  classifier: CommandClassifier,
  options: { readonly minApprovals: number; readonly limit: number },
): Promise<{ suggestions: PolicySuggestion[] }> {
  const [approvals, current] = await Promise.all([decidedApprovals(deps.readDb), currentPolicy(deps)]);
  const judged = await readings(classifier, approvals.map((a) => a.command));
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
