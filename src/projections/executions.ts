// The executions and approvals read models: one row per execution (target, command, verdict, status, exit
// code, output tails, times) and one per approval (its session, what it would run, who asked, who decided).
//
//   ExecutionRequested        inserts the execution (status requested), unless a row with its id exists
//   ApprovalRequested         inserts the approval (pending), unless a row with its id exists; either way the
//                             execution it names, whatever its status, awaits approval under this approval's id
//   ApprovalGranted/Denied/Expired/Cancelled   decides the approval if still pending; its execution follows (approved, denied, …)
//   ExecutionStarted          running, started_at
//   ExecutionSucceeded/Failed/TimedOut          the outcome, tails, finished_at
//   ExecutionRefused          refused, with the reason and its detail (as error), finished_at
//   SessionDeleted            marks the session's rows session_deleted: they stay for audits, and leave the lists,
//                             sweeps and counts (which read live sessions only)
//
// Events about an execution or approval that has no row change nothing; the others overwrite whatever status
// the row had. A batch loads the rows its events name (and a deleted session's), folds the events into them in
// memory and writes each changed row once: a handful of statements however many events it holds.
//
// Past 500 lines because its queries live beside it, as for every read model: the last of them, the fleet-wide
// command log (GET /executions), is one function with its filter and cursor.
import { z } from 'zod';
import type { Queryable, Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import { inPlaceParser } from '../domain/in-place.ts';
import { Actor, EventMetadata } from '../domain/messages.ts';
import { Decision, type SessionEvent, Verdict } from '../domain/session/events.ts';
import { RowSet, type TableShape } from './batch.ts';
import type { Projection } from './projection.ts';
import { isoOrNull, sessionEventsIn } from './rows.ts';
import { InvalidCursorError } from './sessions.ts';

// 2: a deleted session's rows are kept, marked session_deleted (migration 022), instead of dropped.
// 3: what decided under the operator's policy, and a shadow candidate's decision (migration 024).
// 4: where in the log each approval was asked, requested_position (migration 033).
const EXECUTIONS_VERSION = 4;

// What the rules read off an event's envelope; the rest of it passes unread (loose: checked without a copy).
const parseMeta = inPlaceParser(EventMetadata.pick({ occurred_at: true, actor: true }).loose());

// Rows as they travel as JSON: timestamps are ISO strings (the database parses and normalises them).
type ExecutionRecord = {
  id: string;
  session_id: string;
  target: string;
  command: string;
  risk_class: string;
  rule: string;
  reason: string;
  verdict: Verdict;
  known_long: boolean;
  status: string;
  approval_id: string | null;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  stdout_tail: string | null;
  stderr_tail: string | null;
  refusal: string | null;
  requested_by: Actor;
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  event_position: number;
  session_deleted: boolean;
  decision: string | null;
  rule_id: string | null;
  policy_version: number | null;
  shadow: number | null;
  shadow_decision: string | null;
  shadow_rule_id: string | null;
};

type ApprovalRecord = {
  id: string;
  session_id: string;
  execution_id: string;
  command: string;
  target: string;
  risk_class: string;
  status: string;
  requested_by: Actor;
  requested_at: string;
  expires_at: string;
  decided_by: Actor | null;
  decided_at: string | null;
  decision_reason: string | null;
  session_deleted: boolean;
  rule_id: string | null;
  policy_version: number | null;
  requested_position: number | null;
};

const EXECUTIONS: TableShape<ExecutionRecord> = {
  table: 'executions',
  key: ['id'],
  columns: ['id', 'session_id', 'target', 'command', 'risk_class', 'rule', 'reason', 'verdict', 'known_long', 'status', 'approval_id', 'exit_code', 'signal',
    'error', 'stdout_tail', 'stderr_tail', 'refusal', 'requested_by', 'requested_at', 'started_at', 'finished_at', 'duration_ms', 'event_position', 'session_deleted',
    'decision', 'rule_id', 'policy_version', 'shadow', 'shadow_decision', 'shadow_rule_id'],
};

const APPROVALS: TableShape<ApprovalRecord> = {
  table: 'approvals',
  key: ['id'],
  columns: ['id', 'session_id', 'execution_id', 'command', 'target', 'risk_class', 'status', 'requested_by', 'requested_at', 'expires_at', 'decided_by',
    'decided_at', 'decision_reason', 'session_deleted', 'rule_id', 'policy_version', 'requested_position'],
};

/** A session event of the batch with what the rules read off its envelope. */
interface Applied {
  readonly sessionId: string;
  readonly event: SessionEvent;
  readonly at: string;
  readonly actor: Actor;
  readonly position: number;
}

function sessionEvents(events: readonly ProjectedEvent[]): Applied[] {
  return sessionEventsIn(events).map(({ sessionId, event, stored }) => {
    const meta = parseMeta(stored.metadata);
    return { sessionId, event, at: meta.occurred_at, actor: meta.actor, position: stored.position };
  });
}

/** How an execution ended, as its row records it. */
interface Ending {
  exit_code: number | null;
  signal?: string | null;
  error?: string | null;
  stdout_tail: string;
  stderr_tail: string;
  duration_ms: number;
}

function markDeleted<R extends Record<string, unknown> & { session_id: string; session_deleted: boolean }>(rows: RowSet<R>, sessionId: string): void {
  // Collected first: replacing rows while walking the set's own iterator would be fragile.
  for (const row of [...rows.values()].filter((r) => r.session_id === sessionId && !r.session_deleted)) rows.put({ ...row, session_deleted: true });
}

/** The rows one batch works on, and the rules as changes to them. */
class Batch {
  private readonly executions = new RowSet(EXECUTIONS);
  private readonly approvals = new RowSet(APPROVALS);

  /**
   * Loads every row the events can read or mark. Approvals come first: a decision reaches the execution its
   * approval row names, which no event of the batch need mention.
   */
  async load(tx: Queryable, events: readonly Applied[]): Promise<void> {
    const approvalIds = new Set<string>();
    const executionIds = new Set<string>();
    const deleted = new Set<string>();
    for (const { sessionId, event } of events) {
      if ('approval_id' in event.data) approvalIds.add(event.data.approval_id);
      if ('execution_id' in event.data) executionIds.add(event.data.execution_id);
      if (event.type === 'SessionDeleted') deleted.add(sessionId);
    }
    const sessions = [...deleted].map((session_id) => ({ session_id }));
    await Promise.all([this.approvals.load(tx, [...approvalIds].map((id) => ({ id }))), this.approvals.load(tx, sessions, ['session_id'])]);
    for (const approval of this.approvals.values()) executionIds.add(approval.execution_id);
    await Promise.all([this.executions.load(tx, [...executionIds].map((id) => ({ id }))), this.executions.load(tx, sessions, ['session_id'])]);
  }

  flush(tx: Transaction): void {
    this.approvals.flush(tx);
    this.executions.flush(tx);
  }

  apply({ sessionId, event: e, at, actor, position }: Applied): void {
    switch (e.type) {
      case 'ExecutionRequested': {
        const d = e.data;
        if (this.executions.get({ id: d.execution_id })) return;
        this.executions.put({
          id: d.execution_id, session_id: sessionId, target: d.target, command: d.command, risk_class: d.verdict.risk_class, rule: d.verdict.rule,
          reason: d.verdict.reason, verdict: d.verdict, known_long: d.known_long, status: 'requested', approval_id: null, exit_code: null, signal: null,
          error: null, stdout_tail: null, stderr_tail: null, refusal: null, requested_by: actor, requested_at: at, started_at: null, finished_at: null,
          duration_ms: null, event_position: position, session_deleted: false, decision: d.verdict.decision ?? null, rule_id: d.verdict.rule_id ?? null,
          policy_version: d.verdict.policy_version ?? null, shadow: d.shadow?.shadow ?? null, shadow_decision: d.shadow?.decision ?? null, shadow_rule_id: d.shadow?.rule_id ?? null,
        });
        return;
      }
      case 'ApprovalRequested': {
        const d = e.data;
        if (!this.approvals.get({ id: d.approval_id })) {
          this.approvals.put({
            id: d.approval_id, session_id: sessionId, execution_id: d.execution_id, command: d.command, target: d.target, risk_class: d.risk_class,
            status: 'pending', requested_by: actor, requested_at: at, expires_at: d.expires_at, decided_by: null, decided_at: null, decision_reason: null, session_deleted: false,
            rule_id: d.rule_id ?? null, policy_version: d.policy_version ?? null, requested_position: position,
          });
        }
        this.update(d.execution_id, { status: 'awaiting_approval', approval_id: d.approval_id });
        return;
      }
      case 'ApprovalGranted':
        return this.decide(e.data.approval_id, 'granted', 'approved', actor, at, null);
      case 'ApprovalDenied':
        return this.decide(e.data.approval_id, 'denied', 'denied', actor, at, e.data.reason);
      case 'ApprovalExpired':
        return this.decide(e.data.approval_id, 'expired', 'expired', actor, at, null);
      case 'ApprovalCancelled':
        return this.decide(e.data.approval_id, 'cancelled', 'cancelled', actor, at, e.data.reason);
      case 'ExecutionStarted':
        return this.update(e.data.execution_id, { status: 'running', started_at: at });
      case 'ExecutionSucceeded':
        return this.finish(e.data.execution_id, at, 'succeeded', e.data);
      case 'ExecutionFailed':
        return this.finish(e.data.execution_id, at, 'failed', e.data);
      case 'ExecutionTimedOut':
        return this.finish(e.data.execution_id, at, 'timed_out', { ...e.data, exit_code: null, error: `killed at the hard limit of ${e.data.limit_ms} ms` });
      case 'ExecutionRefused':
        return this.update(e.data.execution_id, { status: 'refused', refusal: e.data.reason, error: e.data.detail, finished_at: at });
      case 'SessionDeleted':
        markDeleted(this.approvals, sessionId);
        markDeleted(this.executions, sessionId);
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
      case 'SessionHandedOver':
      case 'TurnFailed':
      case 'TurnStarted':
      case 'TurnCancelRequested':
      case 'ModelCallRecorded':
      case 'TurnEnded':
        return; // not about executions
      default: {
        const unhandled: never = e;
        throw new Error(`executions projection: unhandled event ${JSON.stringify(unhandled)}`);
      }
    }
  }

  private update(id: string, changes: Partial<ExecutionRecord>): void {
    const row = this.executions.get({ id });
    if (row) this.executions.put({ ...row, ...changes });
  }

  private finish(id: string, at: string, status: string, ending: Ending): void {
    this.update(id, {
      status, exit_code: ending.exit_code, signal: ending.signal ?? null, error: ending.error ?? null, stdout_tail: ending.stdout_tail,
      stderr_tail: ending.stderr_tail, duration_ms: ending.duration_ms, finished_at: at,
    });
  }

  private decide(approvalId: string, status: string, executionStatus: string, by: Actor, at: string, reason: string | null): void {
    const approval = this.approvals.get({ id: approvalId });
    if (approval?.status !== 'pending') return;
    this.approvals.put({ ...approval, status, decided_by: by, decided_at: at, decision_reason: reason });
    this.update(approval.execution_id, { status: executionStatus });
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
  async applyBatch(tx, stored) {
    const events = sessionEvents(stored);
    const batch = new Batch();
    await batch.load(tx, events);
    for (const event of events) batch.apply(event);
    batch.flush(tx);
  },
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
  session_deleted: z.boolean(),
  decision: Decision.nullable(),
  rule_id: z.string().nullable(),
  policy_version: z.number().int().nullable(),
});

export type ExecutionView = Omit<z.infer<typeof ExecutionRow>, 'requested_at' | 'started_at' | 'finished_at'> & {
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
};

const EXECUTION_COLUMNS = `id, session_id, target, command, verdict, known_long, status, approval_id, exit_code, signal, error,
  stdout_tail, stderr_tail, refusal, requested_by, requested_at, started_at, finished_at, duration_ms, session_deleted, decision, rule_id, policy_version`;

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

/**
 * A page of the session's executions in the order they were requested, after the one requested at event
 * position `after` (-1: from the first); `next` is the key to pass as `after` for the page that follows, null
 * on the last page.
 */
export async function pageSessionExecutions(db: Queryable, sessionId: string, page: { after: number; limit: number }): Promise<{ executions: ExecutionView[]; next: number | null }> {
  const { rows } = await db.query<{ page_key: string | number }>(
    `SELECT ${EXECUTION_COLUMNS}, event_position AS page_key FROM executions WHERE session_id = $1 AND event_position > $2 ORDER BY event_position LIMIT $3`,
    [sessionId, page.after, page.limit + 1],
  );
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  return { executions: kept.map(toExecution), next: more ? Number(kept.at(-1)!.page_key) : null };
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
  session_deleted: z.boolean(),
  rule_id: z.string().nullable(),
  policy_version: z.number().int().nullable(),
  requested_position: z.coerce.number().int().nullable(),
});

export type ApprovalView = Omit<z.infer<typeof ApprovalRow>, 'requested_at' | 'expires_at' | 'decided_at'> & {
  requested_at: string;
  expires_at: string;
  decided_at: string | null;
};

// The goal comes from the sessions read model, the verdict from the execution: one query, no lookups per row.
const APPROVAL_SELECT = `SELECT a.id, a.session_id, a.execution_id, a.command, a.target, a.risk_class, a.status, a.requested_by, a.requested_at,
    a.expires_at, a.decided_by, a.decided_at, a.decision_reason, s.goal AS session_goal, e.verdict, a.session_deleted, a.rule_id, a.policy_version,
    a.requested_position
  FROM approvals a LEFT JOIN sessions s ON s.id = a.session_id LEFT JOIN executions e ON e.id = a.execution_id`;

function toApproval(raw: unknown): ApprovalView {
  const row = ApprovalRow.parse(raw);
  return { ...row, requested_at: row.requested_at.toISOString(), expires_at: row.expires_at.toISOString(), decided_at: isoOrNull(row.decided_at) };
}

/**
 * With a status, oldest first (the pending queue); without, newest first; optionally one session's. A deleted
 * session's approvals only when `includeDeleted` (marked session_deleted).
 */
export async function listApprovals(
  db: Queryable,
  filter: { status?: z.infer<typeof ApprovalStatus>; sessionId?: string; includeDeleted?: boolean; limit: number },
): Promise<ApprovalView[]> {
  const where: string[] = filter.includeDeleted === true ? [] : ['NOT a.session_deleted'];
  const params: unknown[] = [];
  if (filter.status) where.push(`a.status = $${params.push(filter.status)}`);
  if (filter.sessionId) where.push(`a.session_id = $${params.push(filter.sessionId)}`);
  const order = filter.status ? 'a.requested_at, a.id' : 'a.requested_at DESC, a.id';
  const { rows } = await db.query(
    `${APPROVAL_SELECT} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT $${params.push(filter.limit)}`,
    params,
  );
  return rows.map(toApproval);
}

export async function getApproval(db: Queryable, id: string): Promise<ApprovalView | null> {
  const { rows } = await db.query(`${APPROVAL_SELECT} WHERE a.id = $1`, [id]);
  return rows[0] === undefined ? null : toApproval(rows[0]);
}

type DecisionName = z.infer<typeof Decision>;

export interface ShadowDivergence {
  execution_id: string;
  session_id: string;
  target: string;
  command: string;
  at: string;
  decision: DecisionName;
  rule_id: string;
  shadow_decision: DecisionName;
  shadow_rule_id: string;
}

/** Where a candidate policy in shadow decided otherwise than the policy in force: counts, and the latest such executions. */
export async function shadowDivergences(db: Queryable, shadow: number, limit: number): Promise<{ decided: number; diverged: number; divergences: ShadowDivergence[] }> {
  const [counts, rows] = await Promise.all([
    db.query<{ decided: number; diverged: number }>(
      'SELECT count(*)::int AS decided, count(*) FILTER (WHERE shadow_decision IS DISTINCT FROM decision)::int AS diverged FROM executions WHERE shadow = $1',
      [shadow],
    ),
    db.query<Omit<ShadowDivergence, 'at'> & { at: Date | string }>(
      `SELECT id AS execution_id, session_id, target, command, requested_at AS at, decision, rule_id, shadow_decision, shadow_rule_id FROM executions
        WHERE shadow = $1 AND shadow_decision IS DISTINCT FROM decision ORDER BY event_position DESC LIMIT $2`,
      [shadow, limit],
    ),
  ]);
  return {
    decided: Number(counts.rows[0]?.decided ?? 0),
    diverged: Number(counts.rows[0]?.diverged ?? 0),
    divergences: rows.rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() })),
  };
}

/** Pending approvals past their expiry, for the sweep that records them as expired. */
export async function dueApprovals(db: Queryable, now: Date, limit: number): Promise<Array<{ id: string; session_id: string }>> {
  const { rows } = await db.query<{ id: string; session_id: string }>(
    `SELECT id, session_id FROM approvals WHERE status = 'pending' AND NOT session_deleted AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    [now.toISOString(), limit],
  );
  return rows;
}

/** Executions recorded as running that started before `before`: candidates for having been lost with their server. */
export async function runningSince(db: Queryable, before: Date, limit: number): Promise<Array<{ id: string; session_id: string }>> {
  const { rows } = await db.query<{ id: string; session_id: string }>(
    `SELECT id, session_id FROM executions WHERE status = 'running' AND NOT session_deleted AND started_at < $1 ORDER BY started_at LIMIT $2`,
    [before.toISOString(), limit],
  );
  return rows;
}

/** Executions per status (statuses with none are absent), for metrics and the health summary. */
export async function executionCounts(db: Queryable, options: { since?: Date } = {}): Promise<Map<string, number>> {
  const { rows } = options.since
    ? await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM executions WHERE NOT session_deleted AND requested_at > $1 GROUP BY status', [
        options.since.toISOString(),
      ])
    : await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM executions WHERE NOT session_deleted GROUP BY status');
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export async function pendingApprovalCount(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM approvals WHERE status = 'pending' AND NOT session_deleted`);
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

// ---- the command log: executions across sessions ----

/** What the command log is narrowed by; every field given must hold (AND). Actors are compared as role and id. */
export interface CommandLogFilter {
  /** Exactly this target slug. */
  target?: string;
  /** The host itself and every entity whose parent it is now in the inventory (its containers and VMs). */
  host?: string;
  /** Who requested the execution (the actor of ExecutionRequested). */
  actor?: Actor;
  /** Who granted or denied its approval. */
  approver?: Actor;
  risk?: string;
  status?: z.infer<typeof ExecutionStatus>;
  /** The deciding rule of the operator's policy (rule_id: a rule's id, classifier, floor). */
  rule?: string;
  session?: string;
  /** requested_at >= since and < until. */
  since?: Date;
  until?: Date;
  includeDeleted?: boolean;
}

const CommandLogRowSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  target: z.string(),
  command: z.string(),
  risk_class: z.string(),
  decision: Decision.nullable(),
  rule_id: z.string().nullable(),
  policy_version: z.number().int().nullable(),
  status: ExecutionStatus,
  exit_code: z.number().int().nullable(),
  requested_at: z.date(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  duration_ms: z.number().int().nullable(),
  requested_by: Actor,
  approval_id: z.string().nullable(),
  approval_status: ApprovalStatus.nullable(),
  approver: Actor.nullable(),
  approval_decided_at: z.date().nullable(),
  session_deleted: z.boolean(),
});

export type CommandLogEntry = Omit<z.infer<typeof CommandLogRowSchema>, 'requested_at' | 'started_at' | 'finished_at' | 'approval_decided_at'> & {
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
  approval_decided_at: string | null;
};

// requested_at to the microsecond, in a form that reads back exactly whatever the server's DateStyle.
const LOG_CURSOR_TIME = `to_char(e.requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const LogCursor = z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().min(1).max(200)]);

/** The opaque cursor after a row: its requested time and id, as base64url JSON. */
function encodeLogCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** A cursor this server issued, or InvalidCursorError (400 invalid_cursor). */
function decodeLogCursor(cursor: string): [string, string] {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw new InvalidCursorError();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  const parsed = LogCursor.safeParse(decoded);
  // A time PostgreSQL reads back as written: a 30 February or the year 0000 would fail inside the query instead.
  const ms = parsed.success ? Date.parse(parsed.data[0]) : Number.NaN;
  if (!parsed.success || Number.isNaN(ms) || parsed.data[0].startsWith('0000') || new Date(ms).toISOString().slice(0, 23) !== parsed.data[0].slice(0, 23)) {
    throw new InvalidCursorError();
  }
  return parsed.data;
}

/** The WHERE clause of the command log's statements (with its parameters), from the filter and a cursor. */
function commandLogWhere(filter: CommandLogFilter, cursor: string | undefined): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown): string => `$${params.push(value)}`;
  const where: string[] = filter.includeDeleted === true ? [] : ['NOT e.session_deleted'];
  if (filter.target !== undefined) where.push(`e.target = ${param(filter.target)}`);
  if (filter.host !== undefined) {
    const host = param(filter.host);
    // As a list of targets, so that the target index answers each of them.
    where.push(`e.target = ANY (ARRAY(SELECT ${host}::text UNION SELECT slug FROM entities WHERE parent = ${host}))`);
  }
  if (filter.actor !== undefined) where.push(`e.requested_by->>'role' = ${param(filter.actor.role)} AND e.requested_by->>'id' = ${param(filter.actor.id)}`);
  if (filter.approver !== undefined) {
    where.push(`a.status IN ('granted', 'denied') AND a.decided_by->>'role' = ${param(filter.approver.role)} AND a.decided_by->>'id' = ${param(filter.approver.id)}`);
  }
  if (filter.risk !== undefined) where.push(`e.risk_class = ${param(filter.risk)}`);
  if (filter.status !== undefined) where.push(`e.status = ${param(filter.status)}`);
  if (filter.rule !== undefined) where.push(`e.rule_id = ${param(filter.rule)}`);
  if (filter.session !== undefined) where.push(`e.session_id = ${param(filter.session)}`);
  if (filter.since !== undefined) where.push(`e.requested_at >= ${param(filter.since.toISOString())}::timestamptz`);
  if (filter.until !== undefined) where.push(`e.requested_at < ${param(filter.until.toISOString())}::timestamptz`);
  if (cursor !== undefined) {
    const [at, id] = decodeLogCursor(cursor);
    where.push(`(e.requested_at, e.id) < (${param(at)}::timestamptz, ${param(id)})`);
  }
  return { where: where.length > 0 ? `WHERE ${where.join(' AND ')}` : '', params };
}

const COMMAND_LOG_FROM = 'FROM executions e LEFT JOIN approvals a ON a.id = e.approval_id';

/**
 * A page of executions across sessions, newest requested first (then by id, so that rows requested in the same
 * microsecond keep one order): `cursor` is the previous page's next_cursor. Keyed on (requested_at, id), a page
 * never repeats or skips a row however many executions are requested meanwhile (they sort before the cursor).
 * With the approval joined: its status and who decided it (granted or denied).
 */
export async function listCommandLog(
  db: Queryable,
  filter: CommandLogFilter,
  page: { limit: number; cursor?: string },
): Promise<{ executions: CommandLogEntry[]; next_cursor: string | null }> {
  const { where, params } = commandLogWhere(filter, page.cursor);
  const { rows } = await db.query<{ id: string; cursor_at: string }>(
    `SELECT e.id, e.session_id, e.target, e.command, e.risk_class, e.decision, e.rule_id, e.policy_version, e.status, e.exit_code, e.requested_at,
        e.started_at, e.finished_at, e.duration_ms, e.requested_by, e.approval_id, a.status AS approval_status,
        CASE WHEN a.status IN ('granted', 'denied') THEN a.decided_by END AS approver, a.decided_at AS approval_decided_at, e.session_deleted,
        ${LOG_CURSOR_TIME} AS cursor_at
      ${COMMAND_LOG_FROM} ${where}
      ORDER BY e.requested_at DESC, e.id DESC LIMIT $${params.push(page.limit + 1)}`,
    params,
  );
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  const last = kept.at(-1);
  return {
    executions: kept.map((raw) => {
      const row = CommandLogRowSchema.parse(raw);
      return {
        ...row,
        requested_at: row.requested_at.toISOString(),
        started_at: isoOrNull(row.started_at),
        finished_at: isoOrNull(row.finished_at),
        approval_decided_at: isoOrNull(row.approval_decided_at),
      };
    }),
    next_cursor: more && last ? encodeLogCursor(last.cursor_at, last.id) : null,
  };
}

/** How many executions match, counted up to `upTo` (an export's cap and one: whether it holds them all). */
export async function countCommandLog(db: Queryable, filter: CommandLogFilter, upTo: number): Promise<number> {
  const { where, params } = commandLogWhere(filter, undefined);
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 ${COMMAND_LOG_FROM} ${where} LIMIT $${params.push(upTo)}) m`, params);
  return Number(rows[0]?.n ?? 0);
}
