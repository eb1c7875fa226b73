// The policy what-if (issue 34 point 3): every command ever requested, replayed under today's classifier with the
// policy in force when it was requested and with a candidate, from the executions read model rather than the log.
// One grouped scan counts the executions per command, target and policy version then (with their denials, failed
// runs and newest ids); each distinct command is judged once, and its judgement kept (command_judgements, by
// sha256 and RULES_VERSION) so that the next what-if reads it back instead of parsing it again; the pure part
// (src/domain/policy/what-if.ts) decides each group twice; the few executions shown are read last, by id.
// It writes no event: only judgements to its cache.
import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { z } from 'zod';
import { Actor } from '../domain/messages.ts';
import {
  type CommandJudgement,
  type ExecutionDetail,
  type ExecutionRef,
  type Policy,
  type PolicyThen,
  type ReplayGroup,
  WHAT_IF_FLAGGED,
  WHAT_IF_SAMPLES,
  type WhatIfResult,
  pickedIds,
  planWhatIf,
  whatIfResult,
} from '../domain/policy/index.ts';
import { RULES_VERSION } from '../domain/risk/index.ts';
import { RiskClass, Verdict } from '../domain/session/events.ts';
import type { CommandClassifier } from '../ports/classifier.ts';
import type { Queryable } from '../ports/db.ts';
import type { CommandDeps } from './context.ts';
import { readPolicy } from './policy.ts';

export type { WhatIfResult } from '../domain/policy/index.ts';

export interface WhatIfOptions {
  /** Executions listed per change (newest first); WHAT_IF_SAMPLES by default. */
  readonly samples?: number;
  /** Executions listed per flag; WHAT_IF_FLAGGED by default. */
  readonly flagged?: number;
  /** Commands judged at once when not yet in the cache. */
  readonly concurrency?: number;
}

export const DEFAULT_CONCURRENCY = 4;
/** Judgements written to the cache per statement. */
const WRITE_CHUNK = 500;
/** Judging inline holds the event loop: it is given back at least this often (ms). */
const YIELD_EVERY_MS = 10;

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

// ---- the grouped scan ----

const Count = z.coerce.number().int().nonnegative();
const Refs = z.array(z.string()).nullable();
const GroupRow = z.object({
  command: z.string(),
  target: z.string(),
  epoch: Count,
  n: Count,
  denied: Count,
  failed: Count,
  first_at: z.date(),
  last_at: z.date(),
  recent: Refs,
  recent_denied: Refs,
  recent_failed: Refs,
});

/** "position:id", as the scan aggregates them. */
function refs(encoded: readonly string[] | null): ExecutionRef[] {
  return (encoded ?? []).map((text) => {
    const colon = text.indexOf(':');
    return { position: Number(text.slice(0, colon)), id: text.slice(colon + 1) };
  });
}

const REF = `e.event_position::text || ':' || e.id`;
const DENIED = `a.status = 'denied'`;
const FAILED = `e.status IN ('failed', 'timed_out')`;

/**
 * Every execution, grouped by command, target and the policy in force when it was requested: `positions` are the
 * log positions of the policy's versions, oldest first, and width_bucket counts those before the request (0: none
 * was in force). Executions of deleted sessions are history too, and are counted: auditors want all of it.
 */
async function groupedExecutions(db: Queryable, positions: readonly number[], limits: { samples: number; flagged: number }): Promise<ReplayGroup[]> {
  const { rows } = await db.query(
    `SELECT e.command, e.target, width_bucket(e.event_position, $1::bigint[]) AS epoch, count(*) AS n,
            count(*) FILTER (WHERE ${DENIED}) AS denied, count(*) FILTER (WHERE ${FAILED}) AS failed,
            min(e.requested_at) AS first_at, max(e.requested_at) AS last_at,
            (array_agg(${REF} ORDER BY e.event_position DESC))[1:$2::int] AS recent,
            (array_agg(${REF} ORDER BY e.event_position DESC) FILTER (WHERE ${DENIED}))[1:$3::int] AS recent_denied,
            (array_agg(${REF} ORDER BY e.event_position DESC) FILTER (WHERE ${FAILED}))[1:$3::int] AS recent_failed
       FROM executions e LEFT JOIN approvals a ON a.id = e.approval_id
      GROUP BY e.command, e.target, epoch`,
    [positions, limits.samples, limits.flagged],
  );
  return rows.map((raw) => {
    const row = GroupRow.parse(raw);
    return {
      command: row.command,
      target: row.target,
      epoch: row.epoch,
      count: row.n,
      denied: row.denied,
      failed: row.failed,
      firstAt: row.first_at.toISOString(),
      lastAt: row.last_at.toISOString(),
      recent: refs(row.recent),
      recentDenied: refs(row.recent_denied),
      recentFailed: refs(row.recent_failed),
    };
  });
}

// ---- the judgements, cached ----

const JudgedPart = z.object({ argv: z.array(z.string().nullable()).nullable(), text: z.string(), rule: z.string(), risk_class: RiskClass });
const JudgementRow = z.object({ command_sha256: z.string(), verdict: Verdict, parts: z.array(JudgedPart) });

async function cachedJudgements(db: Queryable, keys: readonly string[]): Promise<Map<string, CommandJudgement>> {
  const { rows } = await db.query('SELECT command_sha256, verdict, parts FROM command_judgements WHERE rules_version = $1 AND command_sha256 = ANY($2::text[])', [RULES_VERSION, keys]);
  return new Map(rows.map((raw) => {
    const row = JudgementRow.parse(raw);
    return [row.command_sha256, { verdict: row.verdict, parts: row.parts }];
  }));
}

async function keepJudgements(db: Queryable, judged: ReadonlyArray<{ key: string; judgement: CommandJudgement }>): Promise<void> {
  for (let i = 0; i < judged.length; i += WRITE_CHUNK) {
    const chunk = judged.slice(i, i + WRITE_CHUNK);
    // Another what-if may have judged the same commands meanwhile: theirs is the same judgement.
    await db.query(
      `INSERT INTO command_judgements (command_sha256, rules_version, verdict, parts)
       SELECT k, $1, v, p FROM ROWS FROM (unnest($2::text[]), jsonb_array_elements($3::jsonb), jsonb_array_elements($4::jsonb)) AS j(k, v, p)
       ON CONFLICT DO NOTHING`,
      [RULES_VERSION, chunk.map((j) => j.key), JSON.stringify(chunk.map((j) => j.judgement.verdict)), JSON.stringify(chunk.map((j) => j.judgement.parts))],
    );
  }
}

/**
 * Keeps the judgement the request path made of a command (run judges each command it is asked for), so that a
 * what-if finds it kept; a judgement without parts (too slow, failed) is not kept, as below.
 */
export async function keepJudgement(db: Queryable, command: string, judgement: CommandJudgement): Promise<void> {
  if (judgement.parts.length > 0) await keepJudgements(db, [{ key: sha256(command), judgement }]);
}

/** Today's judgement of each command: from the cache, or from the classifier (a few at once) and then kept. */
export async function judgementsOf(db: Queryable, classifier: CommandClassifier, commands: readonly string[], concurrency: number): Promise<Map<string, CommandJudgement>> {
  const keyOf = new Map(commands.map((command) => [command, sha256(command)]));
  const cached = await cachedJudgements(db, [...keyOf.values()]);
  const judgements = new Map<string, CommandJudgement>();
  const missing: string[] = [];
  for (const [command, key] of keyOf) {
    const found = cached.get(key);
    if (found === undefined) missing.push(command);
    else judgements.set(command, found);
  }

  const fresh: Array<{ key: string; judgement: CommandJudgement }> = [];
  let next = 0;
  let yielded = performance.now();
  const worker = async () => {
    for (let i = next++; i < missing.length; i = next++) {
      const command = missing[i]!;
      const { verdict, parts = [] } = await classifier.judge({ command, parts: true });
      const judgement = { verdict, parts };
      judgements.set(command, judgement);
      // A command judged not at all (too slow, the classifier failed) has no parts: decided as unknown this
      // time, and asked again next time rather than kept.
      if (parts.length > 0) fresh.push({ key: keyOf.get(command)!, judgement });
      // Short commands are judged inline, on this event loop: other requests get their turn between them.
      if (performance.now() - yielded > YIELD_EVERY_MS) {
        await yieldToLoop();
        yielded = performance.now();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, missing.length)) }, worker));
  await keepJudgements(db, fresh);
  return judgements;
}

// ---- the executions shown ----

const DetailRow = z.object({
  id: z.string(),
  session_id: z.string(),
  target: z.string(),
  command: z.string(),
  requested_at: z.date(),
  status: z.string(),
  decided_by: Actor.nullable(),
});

/** Who decided an approval is named only for a grant or a denial (an expiry is the server's, a cancel no decision). */
async function executionDetails(db: Queryable, ids: readonly string[]): Promise<Map<string, ExecutionDetail>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query(
    `SELECT e.id, e.session_id, e.target, e.command, e.requested_at, e.status, CASE WHEN a.status IN ('granted', 'denied') THEN a.decided_by END AS decided_by
       FROM executions e LEFT JOIN approvals a ON a.id = e.approval_id
      WHERE e.id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((raw) => {
    const row = DetailRow.parse(raw);
    return [row.id, { session_id: row.session_id, target: row.target, command: row.command, at: row.requested_at.toISOString(), decided_by: row.decided_by, outcome: row.status }];
  }));
}

/**
 * What `candidate` would have changed over every execution in the read model: each decided under today's
 * classifier with the policy in force when it was requested, and with the candidate.
 */
export async function whatIf(deps: Pick<CommandDeps, 'readDb' | 'store'>, classifier: CommandClassifier, candidate: Policy, options: WhatIfOptions = {}): Promise<WhatIfResult> {
  const [result] = await whatIfEach(deps, classifier, [candidate], options);
  return result!;
}

/** whatIf for several candidates over one scan of the history, each command judged once for all of them. */
export async function whatIfEach(deps: Pick<CommandDeps, 'readDb' | 'store'>, classifier: CommandClassifier, candidates: readonly Policy[], options: WhatIfOptions = {}): Promise<WhatIfResult[]> {
  const limits = { samples: options.samples ?? WHAT_IF_SAMPLES, flagged: options.flagged ?? WHAT_IF_FLAGGED };
  const { versions } = await readPolicy(deps);
  const policiesThen: PolicyThen[] = [{ version: 0, policy: null }, ...versions.map((v) => ({ version: v.version, policy: v.policy }))];
  const groups = await groupedExecutions(deps.readDb, versions.map((v) => v.position), limits);
  const judgements = await judgementsOf(deps.readDb, classifier, [...new Set(groups.map((g) => g.command))], options.concurrency ?? DEFAULT_CONCURRENCY);
  const plans = candidates.map((candidate) => planWhatIf({ groups, judgements, policiesThen, candidate, limits }));
  const details = await executionDetails(deps.readDb, [...new Set(plans.flatMap(pickedIds))]);
  return plans.map((plan) => whatIfResult(plan, details));
}
