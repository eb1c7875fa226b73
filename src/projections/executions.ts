// The executions and approvals read models: one row per execution (target, command, verdict, status, exit
// code, output tails, times) and one per approval (its session, what it would run, who asked, who decided).
//
//   ExecutionRequested        inserts the execution (status requested)
//   ApprovalRequested         inserts the approval (pending); the execution awaits approval
//   ApprovalGranted/Denied/Expired/Cancelled   decides the approval; the execution follows (approved, denied, …)
//   ExecutionStarted          running, started_at
//   ExecutionSucceeded/Failed/TimedOut          the outcome, tails, finished_at
//   ExecutionRefused          refused, with the reason
//   SessionDeleted            drops the session's rows
import { z } from 'zod';
import type { Queryable } from '../adapters/db/db.ts';
import { Actor, EventMetadata } from '../domain/messages.ts';
import { type SessionEvent, Verdict } from '../domain/session/events.ts';
import { eachEvent, type Projection } from './projection.ts';
import { isoOrNull, onSessionEvents, pgJson } from './rows.ts';

const EXECUTIONS_VERSION = 1;

const Meta = EventMetadata.pick({ occurred_at: true, actor: true });

async function finish(tx: Queryable, id: string, at: string, status: string, fields: { exit_code: number | null; signal?: string | null; error?: string | null; stdout_tail: string; stderr_tail: string; duration_ms: number }) {
  await tx.query(
    `UPDATE executions SET status = $2, exit_code = $3, signal = $4, error = $5, stdout_tail = $6, stderr_tail = $7, duration_ms = $8, finished_at = $9
     WHERE id = $1`,
    [id, status, fields.exit_code, fields.signal ?? null, fields.error ?? null, fields.stdout_tail, fields.stderr_tail, fields.duration_ms, at],
  );
}

async function decideApproval(tx: Queryable, approvalId: string, status: string, executionStatus: string, by: Actor, at: string, reason: string | null) {
  const { rows } = await tx.query<{ execution_id: string }>(
    `UPDATE approvals SET status = $2, decided_by = $3::jsonb, decided_at = $4, decision_reason = $5 WHERE id = $1 AND status = 'pending' RETURNING execution_id`,
    [approvalId, status, pgJson(by), at, reason],
  );
  const executionId = rows[0]?.execution_id;
  if (executionId !== undefined) await tx.query('UPDATE executions SET status = $2 WHERE id = $1', [executionId, executionStatus]);
}

async function applyEvent(tx: Queryable, sessionId: string, e: SessionEvent, meta: { occurred_at: string; actor: Actor }, position: number): Promise<void> {
  const at = meta.occurred_at;
  switch (e.type) {
    case 'ExecutionRequested': {
      const d = e.data;
      await tx.query(
        `INSERT INTO executions (id, session_id, target, command, risk_class, rule, reason, verdict, known_long, status, requested_by, requested_at, event_position)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, 'requested', $10::jsonb, $11, $12) ON CONFLICT (id) DO NOTHING`,
        [d.execution_id, sessionId, d.target, d.command, d.verdict.risk_class, d.verdict.rule, d.verdict.reason, pgJson(d.verdict), d.known_long, pgJson(meta.actor), at, position],
      );
      return;
    }
    case 'ApprovalRequested': {
      const d = e.data;
      await tx.query(
        `INSERT INTO approvals (id, session_id, execution_id, command, target, risk_class, status, requested_by, requested_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7::jsonb, $8, $9) ON CONFLICT (id) DO NOTHING`,
        [d.approval_id, sessionId, d.execution_id, d.command, d.target, d.risk_class, pgJson(meta.actor), at, d.expires_at],
      );
      await tx.query(`UPDATE executions SET status = 'awaiting_approval', approval_id = $2 WHERE id = $1`, [d.execution_id, d.approval_id]);
      return;
    }
    case 'ApprovalGranted':
      return decideApproval(tx, e.data.approval_id, 'granted', 'approved', meta.actor, at, null);
    case 'ApprovalDenied':
      return decideApproval(tx, e.data.approval_id, 'denied', 'denied', meta.actor, at, e.data.reason);
    case 'ApprovalExpired':
      return decideApproval(tx, e.data.approval_id, 'expired', 'expired', meta.actor, at, null);
    case 'ApprovalCancelled':
      return decideApproval(tx, e.data.approval_id, 'cancelled', 'cancelled', meta.actor, at, e.data.reason);
    case 'ExecutionStarted':
      await tx.query(`UPDATE executions SET status = 'running', started_at = $2 WHERE id = $1`, [e.data.execution_id, at]);
      return;
    case 'ExecutionSucceeded':
      return finish(tx, e.data.execution_id, at, 'succeeded', e.data);
    case 'ExecutionFailed':
      return finish(tx, e.data.execution_id, at, 'failed', e.data);
    case 'ExecutionTimedOut':
      return finish(tx, e.data.execution_id, at, 'timed_out', { ...e.data, exit_code: null, error: `killed at the hard limit of ${e.data.limit_ms} ms` });
    case 'ExecutionRefused':
      await tx.query(`UPDATE executions SET status = 'refused', refusal = $2, error = $3, finished_at = $4 WHERE id = $1`, [e.data.execution_id, e.data.reason, e.data.detail, at]);
      return;
    case 'SessionDeleted':
      await tx.query('DELETE FROM approvals WHERE session_id = $1', [sessionId]);
      await tx.query('DELETE FROM executions WHERE session_id = $1', [sessionId]);
      return;
    case 'SessionStarted':
    case 'SessionReopened':
    case 'UserMessagePosted':
    case 'AssistantMessageRecorded':
    case 'ToolCallRequested':
    case 'ToolCallCompleted':
    case 'GoalSet':
    case 'GoalSuperseded':
    case 'PlanProposed':
    case 'PlanStepsReplaced':
    case 'PlanStepUpdated':
    case 'TaskCompleted':
    case 'AssentOpened':
    case 'AssentClosed':
    case 'TurnFailed':
    case 'TurnStarted':
    case 'TurnCancelRequested':
    case 'TurnEnded':
      return; // not about executions
    default: {
      const unhandled: never = e;
      throw new Error(`executions projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

export const executionsProjection: Projection = {
  name: 'executions',
  version: EXECUTIONS_VERSION,
  tables: ['approvals', 'executions'],
  handles: new Set([
    'ExecutionRequested', 'ApprovalRequested', 'ApprovalGranted', 'ApprovalDenied', 'ApprovalExpired', 'ApprovalCancelled',
    'ExecutionStarted', 'ExecutionSucceeded', 'ExecutionFailed', 'ExecutionTimedOut', 'ExecutionRefused', 'SessionDeleted',
  ]),
  applyBatch: eachEvent(onSessionEvents((tx, sessionId, event, stored) => applyEvent(tx, sessionId, event, Meta.parse(stored.metadata), stored.position))),
};

// ---- queries ----

export const ExecutionStatus = z.enum(['requested', 'awaiting_approval', 'approved', 'running', 'succeeded', 'failed', 'timed_out', 'refused', 'denied', 'expired', 'cancelled']);

const ExecutionRow = z.object({
  id: z.string(),
  session_id: z.string(),
  target: z.string(),
  command: z.string(),
  verdict: Verdict,
  known_long: z.boolean(),
  status: ExecutionStatus,
  approval_id: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  error: z.string().nullable(),
  stdout_tail: z.string().nullable(),
  stderr_tail: z.string().nullable(),
  refusal: z.string().nullable(),
  requested_by: Actor,
  requested_at: z.date(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  duration_ms: z.number().int().nullable(),
});

export type ExecutionView = Omit<z.infer<typeof ExecutionRow>, 'requested_at' | 'started_at' | 'finished_at'> & {
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
};

const EXECUTION_COLUMNS = `id, session_id, target, command, verdict, known_long, status, approval_id, exit_code, signal, error,
  stdout_tail, stderr_tail, refusal, requested_by, requested_at, started_at, finished_at, duration_ms`;

function toExecution(raw: unknown): ExecutionView {
  const row = ExecutionRow.parse(raw);
  return { ...row, requested_at: row.requested_at.toISOString(), started_at: isoOrNull(row.started_at), finished_at: isoOrNull(row.finished_at) };
}

export async function getExecution(db: Queryable, id: string): Promise<ExecutionView | null> {
  const { rows } = await db.query(`SELECT ${EXECUTION_COLUMNS} FROM executions WHERE id = $1`, [id]);
  return rows[0] === undefined ? null : toExecution(rows[0]);
}

export async function listSessionExecutions(db: Queryable, sessionId: string): Promise<ExecutionView[]> {
  const { rows } = await db.query(`SELECT ${EXECUTION_COLUMNS} FROM executions WHERE session_id = $1 ORDER BY event_position`, [sessionId]);
  return rows.map(toExecution);
}

export const ApprovalStatus = z.enum(['pending', 'granted', 'denied', 'expired', 'cancelled']);

const ApprovalRow = z.object({
  id: z.string(),
  session_id: z.string(),
  execution_id: z.string(),
  command: z.string(),
  target: z.string(),
  risk_class: z.string(),
  status: ApprovalStatus,
  requested_by: Actor,
  requested_at: z.date(),
  expires_at: z.date(),
  decided_by: Actor.nullable(),
  decided_at: z.date().nullable(),
  decision_reason: z.string().nullable(),
  session_goal: z.string().nullable(),
  verdict: Verdict.nullable(),
});

export type ApprovalView = Omit<z.infer<typeof ApprovalRow>, 'requested_at' | 'expires_at' | 'decided_at'> & {
  requested_at: string;
  expires_at: string;
  decided_at: string | null;
};

// The goal comes from the sessions read model, the verdict from the execution: one query, no lookups per row.
const APPROVAL_SELECT = `SELECT a.id, a.session_id, a.execution_id, a.command, a.target, a.risk_class, a.status, a.requested_by, a.requested_at,
    a.expires_at, a.decided_by, a.decided_at, a.decision_reason, s.goal AS session_goal, e.verdict
  FROM approvals a LEFT JOIN sessions s ON s.id = a.session_id LEFT JOIN executions e ON e.id = a.execution_id`;

function toApproval(raw: unknown): ApprovalView {
  const row = ApprovalRow.parse(raw);
  return { ...row, requested_at: row.requested_at.toISOString(), expires_at: row.expires_at.toISOString(), decided_at: isoOrNull(row.decided_at) };
}

export async function listApprovals(db: Queryable, filter: { status?: z.infer<typeof ApprovalStatus>; limit: number }): Promise<ApprovalView[]> {
  const { rows } = filter.status
    ? await db.query(`${APPROVAL_SELECT} WHERE a.status = $1 ORDER BY a.requested_at, a.id LIMIT $2`, [filter.status, filter.limit])
    : await db.query(`${APPROVAL_SELECT} ORDER BY a.requested_at DESC, a.id LIMIT $1`, [filter.limit]);
  return rows.map(toApproval);
}

export async function getApproval(db: Queryable, id: string): Promise<ApprovalView | null> {
  const { rows } = await db.query(`${APPROVAL_SELECT} WHERE a.id = $1`, [id]);
  return rows[0] === undefined ? null : toApproval(rows[0]);
}

/** Pending approvals past their expiry, for the sweep that records them as expired. */
export async function dueApprovals(db: Queryable, now: Date, limit: number): Promise<Array<{ id: string; session_id: string }>> {
  const { rows } = await db.query<{ id: string; session_id: string }>(
    `SELECT id, session_id FROM approvals WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows;
}

/** Executions recorded as running that started before `before`: candidates for having been lost with their server. */
export async function runningSince(db: Queryable, before: Date, limit: number): Promise<Array<{ id: string; session_id: string }>> {
  const { rows } = await db.query<{ id: string; session_id: string }>(
    `SELECT id, session_id FROM executions WHERE status = 'running' AND started_at < $1 ORDER BY started_at LIMIT $2`,
    [before.toISOString(), limit],
  );
  return rows;
}

/** Executions per status (statuses with none are absent), for metrics and the health summary. */
export async function executionCounts(db: Queryable, options: { since?: Date } = {}): Promise<Map<string, number>> {
  const { rows } = options.since
    ? await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM executions WHERE requested_at > $1 GROUP BY status', [options.since.toISOString()])
    : await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM executions GROUP BY status');
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export async function pendingApprovalCount(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM approvals WHERE status = 'pending'`);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Whether a session changed the fleet (a succeeded execution above reversible_low) but wrote nothing back
 * (no knowledge, attribute or relationship tool call): reads the transcript's tool_calls beside the executions.
 */
export async function changedWithoutWriteback(db: Queryable, sessionId: string): Promise<boolean> {
  const { rows } = await db.query<{ changed: number; written: number }>(
    `SELECT (SELECT count(*)::int FROM executions WHERE session_id = $1 AND status = 'succeeded' AND verdict->>'risk_class' <> 'reversible_low') AS changed,
            (SELECT count(*)::int FROM tool_calls WHERE session_id = $1 AND name IN ('upsert_knowledge', 'update_entity_attributes', 'create_relationship')) AS written`,
    [sessionId],
  );
  const row = rows[0];
  return row !== undefined && Number(row.changed) > 0 && Number(row.written) === 0;
}
