// The sessions read model: one row per session with what auditors list and filter on (counts, turns, top
// tools, entities touched, approvals, outcome, blocker, closed_at), and the queries that read it.
//
// Handles every session event: each one moves last_active_at. Besides that,
//   SessionStarted            inserts the row (created_at)
//   UserMessagePosted         counts a user message; a new turn begins
//   AssistantMessageRecorded  counts the turn's assistant message if this creates it; keeps the text for the blocker rules
//   ToolCallRequested         the same for the turn's message; counts the tool call, its tool, the entities it names
//   GoalSet                   goal and title
//   TaskCompleted             status, outcome, summary, closed_at, blocker
//   SessionReopened           active again: outcome, summary, blocker, closed_at cleared
//   Approval*                 pending_approvals, approvals_requested, approvals_expired and the blocker facts
//   TurnFailed                the blocker facts
//   SessionDeleted            drops the session's rows
import { z } from 'zod';
import type { Queryable } from '../adapters/db/db.ts';
import { BLOCKER_RULES_VERSION, type BlockerEvidence, type BlockerFacts, deriveBlocker } from '../domain/session/blocker.ts';
import { entitySlugsIn } from '../domain/session/entities.ts';
import { Outcome, sessionEventSchemas, type SessionEvent, TurnFailureReason } from '../domain/session/events.ts';
import { eachEvent, type Projection } from './projection.ts';
import { isoOrNull, occurredAt, onSessionEvents, pgJson } from './rows.ts';

/** Tables and rules together: the blocker rules' version is part of it, so new rules rebuild the model. */
const TABLES_VERSION = 2;

// ---- the projection ----

const FactsRow = z.object({
  status: z.enum(['active', 'done', 'failed']),
  outcome: Outcome.nullable(),
  blocker: z.string().nullable(),
  turn_message_id: z.string().nullable(),
  pending_approval_ids: z.array(z.string()),
  task_approvals_expired: z.number().int(),
  task_approvals_denied: z.number().int(),
  task_approvals_orphaned: z.number().int(),
  task_executions_refused: z.number().int(),
  task_executions_timed_out: z.number().int(),
  last_turn_failure: TurnFailureReason.nullable(),
  last_assistant_text: z.string().nullable(),
  summary: z.string().nullable(),
});
type FactsRow = z.infer<typeof FactsRow>;

const FACT_COLUMNS = Object.keys(FactsRow.shape).join(', ');

function blockerFacts(row: FactsRow, outcome: Outcome, summary: string | null): BlockerFacts {
  return {
    outcome,
    summary,
    // complete_task cancels still-pending approvals as orphaned just before TaskCompleted: those were pending at the end.
    approvalsPendingAtEnd: row.pending_approval_ids.length + row.task_approvals_orphaned,
    approvalsExpired: row.task_approvals_expired,
    approvalsDenied: row.task_approvals_denied,
    executionsRefused: row.task_executions_refused,
    executionsTimedOut: row.task_executions_timed_out,
    lastTurnFailure: row.last_turn_failure,
    lastAssistantText: row.last_assistant_text,
  };
}

// Each event is one statement where it can be (a round trip is what a rebuild spends its time on): the event's
// own changes move last_active_at too, and its SQL works from the row it changes rather than reading it first.
// The blocker rules run in TypeScript, so the events they follow return the facts and may need a second statement.

/** One UPDATE: last_active_at and the event's own `changes`, whose parameters start at $3. */
async function update(tx: Queryable, id: string, at: string, changes: string, params: readonly unknown[] = []): Promise<void> {
  await tx.query(`UPDATE sessions SET last_active_at = $2${changes === '' ? '' : `, ${changes}`} WHERE id = $1`, [id, at, ...params]);
}

/** The same UPDATE, returning the facts as they stand after it; null when the session is unknown or deleted. */
async function updateReturningFacts(tx: Queryable, id: string, at: string, changes: string, params: readonly unknown[]): Promise<FactsRow | null> {
  const { rows } = await tx.query(`UPDATE sessions SET last_active_at = $2, ${changes} WHERE id = $1 RETURNING ${FACT_COLUMNS}`, [id, at, ...params]);
  return rows[0] === undefined ? null : FactsRow.parse(rows[0]);
}

/** The turn's assistant message is counted by the event that creates it: 1 unless turn_message_id already is `messageId`. */
const opens = (messageId: string) => `CASE WHEN turn_message_id = ${messageId} THEN 0 ELSE 1 END`;

/**
 * Adds the slugs (a text[] parameter) to the session's entities: a CTE that inserts them into session_entities,
 * and the new value of the `entities` column, which holds the same set sorted. Both do nothing for an unknown session.
 */
function entitiesAdded(slugs: string): { insert: string; column: string } {
  return {
    insert: `INSERT INTO session_entities (session_id, slug) SELECT id, unnest(${slugs}::text[]) FROM sessions WHERE id = $1 ON CONFLICT DO NOTHING`,
    column: `ARRAY(SELECT DISTINCT slug COLLATE "C" FROM unnest(entities || ${slugs}::text[]) AS slug ORDER BY 1)`,
  };
}

/**
 * top_tools after one more call of the tool `name`, whose new count the CTE `counted` returns. Only that tool's
 * count grew, so the new top five are the best five of the old ones (without it) and it: no other tool can climb.
 */
const topToolsWith = (name: string) => `(
  SELECT jsonb_agg(jsonb_build_object('name', t.name, 'count', t.count) ORDER BY t.count DESC, t.name)
  FROM (SELECT name, count FROM counted
        UNION ALL
        SELECT (tool->>'name') COLLATE "C", (tool->>'count')::integer FROM jsonb_array_elements(top_tools) AS tool WHERE tool->>'name' <> ${name}
        ORDER BY count DESC, name LIMIT 5) t)`;

/**
 * The agent's final text usually trails complete_task in the same turn, and often says what blocked it.
 * Text arriving while the session is closed may fill in a missing blocker, but never replaces one.
 */
async function fillBlocker(tx: Queryable, id: string, row: FactsRow | null): Promise<void> {
  if (row === null || row.status === 'active' || row.outcome === null || row.blocker !== null) return;
  await setBlocker(tx, id, row, row.outcome, row.summary);
}

async function setBlocker(tx: Queryable, id: string, row: FactsRow, outcome: Outcome, summary: string | null): Promise<void> {
  const derived = deriveBlocker(blockerFacts(row, outcome, summary));
  if (derived === null) return;
  await tx.query('UPDATE sessions SET blocker = $2, blocker_evidence = $3::jsonb WHERE id = $1', [id, derived.blocker, pgJson(derived.evidence)]);
}

async function resolveApproval(tx: Queryable, id: string, at: string, approvalId: string, counts: { expired?: 1; denied?: 1; orphaned?: 1 }): Promise<void> {
  // Resolving an approval that is not pending (already resolved) counts nothing; array_remove then changes nothing either.
  const ifPending = (count: string) => `CASE WHEN $3 = ANY(pending_approval_ids) THEN ${count} ELSE 0 END`;
  await update(
    tx,
    id,
    at,
    `pending_approval_ids = array_remove(pending_approval_ids, $3),
     approvals_expired = approvals_expired + ${ifPending('$4')}, task_approvals_expired = task_approvals_expired + ${ifPending('$4')},
     task_approvals_denied = task_approvals_denied + ${ifPending('$5')}, task_approvals_orphaned = task_approvals_orphaned + ${ifPending('$6')}`,
    [approvalId, counts.expired ?? 0, counts.denied ?? 0, counts.orphaned ?? 0],
  );
}

async function applyEvent(tx: Queryable, id: string, e: SessionEvent, at: string): Promise<void> {
  switch (e.type) {
    case 'SessionStarted':
      await tx.query(`INSERT INTO sessions (id, status, created_at, last_active_at) VALUES ($1, 'active', $2, $2) ON CONFLICT (id) DO NOTHING`, [id, at]);
      return;
    case 'UserMessagePosted':
      return update(tx, id, at, 'user_message_count = user_message_count + 1, turn_message_id = NULL, last_turn_failure = NULL');
    case 'AssistantMessageRecorded': {
      const { message_id, text } = e.data;
      const row = await updateReturningFacts(
        tx,
        id,
        at,
        `assistant_message_count = assistant_message_count + ${opens('$3')}, turn_message_id = $3, last_assistant_text = $4, last_turn_failure = NULL`,
        [message_id, text],
      );
      return fillBlocker(tx, id, row);
    }
    case 'ToolCallRequested': {
      const { message_id, name, args } = e.data;
      const entities = entitiesAdded('$5');
      await tx.query(
        `WITH counted AS (
           INSERT INTO session_tool_counts (session_id, name, count) SELECT id, $4, 1 FROM sessions WHERE id = $1
           ON CONFLICT (session_id, name) DO UPDATE SET count = session_tool_counts.count + 1
           RETURNING name, count
         ), named AS (${entities.insert})
         UPDATE sessions SET last_active_at = $2, assistant_message_count = assistant_message_count + ${opens('$3')}, turn_message_id = $3,
           tool_call_count = tool_call_count + 1, top_tools = ${topToolsWith('$4')}, entities = ${entities.column}
         WHERE id = $1`,
        [id, at, message_id, name, entitySlugsIn(args)],
      );
      return;
    }
    case 'GoalSet':
      return update(tx, id, at, 'goal = $3, title = $4', [e.data.goal, e.data.title]);
    case 'TaskCompleted': {
      const { status, outcome, summary } = e.data;
      // The blocker of the task before a reopen is gone; this task's, if any, follows from the facts returned.
      const row = await updateReturningFacts(
        tx,
        id,
        at,
        'status = $3, outcome = $4, summary = $5, closed_at = $2, blocker = NULL, blocker_evidence = NULL',
        [status, outcome, summary],
      );
      if (row !== null) await setBlocker(tx, id, row, outcome, summary);
      return;
    }
    case 'SessionReopened':
      return update(
        tx,
        id,
        at,
        `status = 'active', outcome = NULL, summary = NULL, blocker = NULL, blocker_evidence = NULL, closed_at = NULL,
         task_approvals_expired = 0, task_approvals_denied = 0, task_approvals_orphaned = 0,
         task_executions_refused = 0, task_executions_timed_out = 0`,
      );
    case 'ApprovalRequested':
      return update(tx, id, at, 'pending_approval_ids = array_append(pending_approval_ids, $3), approvals_requested = approvals_requested + 1', [
        e.data.approval_id,
      ]);
    case 'ApprovalGranted':
      return resolveApproval(tx, id, at, e.data.approval_id, {});
    case 'ApprovalDenied':
      return resolveApproval(tx, id, at, e.data.approval_id, { denied: 1 });
    case 'ApprovalExpired':
      return resolveApproval(tx, id, at, e.data.approval_id, { expired: 1 });
    case 'ApprovalCancelled':
      return resolveApproval(tx, id, at, e.data.approval_id, e.data.reason.startsWith('orphaned') ? { orphaned: 1 } : {});
    case 'TurnFailed':
      return fillBlocker(tx, id, await updateReturningFacts(tx, id, at, 'last_turn_failure = $3', [e.data.reason]));
    case 'ExecutionRequested': {
      const entities = entitiesAdded('$3');
      await tx.query(
        `WITH named AS (${entities.insert})
         UPDATE sessions SET last_active_at = $2, executions_count = executions_count + 1,
           targets = CASE WHEN $4 = ANY(targets) THEN targets ELSE (SELECT array_agg(t ORDER BY t) FROM unnest(array_append(targets, $4)) t) END,
           entities = ${entities.column}
         WHERE id = $1`,
        [id, at, [e.data.target], e.data.target],
      );
      return;
    }
    case 'ExecutionFailed':
      return update(tx, id, at, 'failed_executions = failed_executions + 1');
    case 'ExecutionTimedOut':
      return update(tx, id, at, 'failed_executions = failed_executions + 1, task_executions_timed_out = task_executions_timed_out + 1');
    case 'ExecutionRefused':
      // Only the retry cap speaks of a tool that kept failing; other refusals (a key mismatch) are not the tool's error.
      return update(tx, id, at, e.data.reason === 'retry_cap' ? 'task_executions_refused = task_executions_refused + 1' : '');
    case 'SessionDeleted':
      // An unknown session has no tool counts nor entities either: they are only ever added beside its row.
      await tx.query(
        `WITH tools AS (DELETE FROM session_tool_counts WHERE session_id = $1), named AS (DELETE FROM session_entities WHERE session_id = $1)
         DELETE FROM sessions WHERE id = $1`,
        [id],
      );
      return;
    case 'ToolCallCompleted':
    case 'GoalSuperseded':
    case 'PlanProposed':
    case 'PlanStepsReplaced':
    case 'PlanStepUpdated':
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'AssentOpened':
    case 'AssentClosed':
    case 'TurnStarted':
    case 'TurnCancelRequested':
    case 'TurnEnded':
      return update(tx, id, at, ''); // only last_active_at
    default: {
      const unhandled: never = e;
      throw new Error(`sessions projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

export const sessionsProjection: Projection = {
  name: 'sessions',
  version: TABLES_VERSION * 1000 + BLOCKER_RULES_VERSION,
  tables: ['session_tool_counts', 'session_entities', 'sessions'],
  // Every session event, because every one of them is activity that moves last_active_at.
  handles: new Set(Object.keys(sessionEventSchemas)),
  applyBatch: eachEvent(onSessionEvents((tx, id, event, stored) => applyEvent(tx, id, event, occurredAt(stored)))),
};

// ---- queries ----

export interface ToolCount {
  name: string;
  count: number;
}

export interface SessionView {
  id: string;
  title: string | null;
  goal: string | null;
  status: 'active' | 'done' | 'failed';
  outcome: Outcome | null;
  summary: string | null;
  blocker: string | null;
  blocker_evidence: BlockerEvidence | null;
  pending_approvals: number;
  approvals_requested: number;
  approvals_expired: number;
  message_count: number;
  user_message_count: number;
  assistant_message_count: number;
  tool_call_count: number;
  turn_count: number;
  top_tools: ToolCount[];
  entities: string[];
  executions_count: number;
  failed_executions: number;
  /** Targets commands ran on (run), a subset of entities. */
  targets: string[];
  created_at: string;
  last_active_at: string;
  closed_at: string | null;
  /** (closed_at, or now while open) − created_at, in whole seconds. */
  duration_seconds: number;
}

const SessionRow = z.object({
  id: z.string(),
  title: z.string().nullable(),
  goal: z.string().nullable(),
  status: z.enum(['active', 'done', 'failed']),
  outcome: Outcome.nullable(),
  summary: z.string().nullable(),
  blocker: z.string().nullable(),
  blocker_evidence: z.object({ source: z.enum(['event', 'text', 'summary']), detail: z.string() }).nullable(),
  pending_approvals: z.number().int(),
  approvals_requested: z.number().int(),
  approvals_expired: z.number().int(),
  message_count: z.number().int(),
  user_message_count: z.number().int(),
  assistant_message_count: z.number().int(),
  tool_call_count: z.number().int(),
  turn_count: z.number().int(),
  top_tools: z.array(z.object({ name: z.string(), count: z.number().int() })),
  entities: z.array(z.string()),
  executions_count: z.number().int(),
  failed_executions: z.number().int(),
  targets: z.array(z.string()),
  created_at: z.date(),
  last_active_at: z.date(),
  closed_at: z.date().nullable(),
  duration_seconds: z.number().int(),
});

const VIEW_COLUMNS = `id, title, goal, status, outcome, summary, blocker, blocker_evidence, pending_approvals, approvals_requested,
  approvals_expired, message_count, user_message_count, assistant_message_count, tool_call_count, turn_count, top_tools, entities,
  executions_count, failed_executions, targets, created_at, last_active_at, closed_at,
  greatest(0, floor(extract(epoch FROM coalesce(closed_at, now()) - created_at)))::integer AS duration_seconds`;

function toView(raw: unknown): SessionView {
  const row = SessionRow.parse(raw);
  return { ...row, created_at: row.created_at.toISOString(), last_active_at: row.last_active_at.toISOString(), closed_at: isoOrNull(row.closed_at) };
}

export interface SessionFilter {
  outcome?: Outcome;
  status?: 'active' | 'done' | 'failed';
  /** Sessions whose tool calls named this entity slug. */
  entity_id?: string;
  blocker?: string;
  /** last_active_at >= since */
  since?: Date;
  limit: number;
  cursor?: string;
}

export class InvalidCursorError extends Error {
  readonly code = 'invalid_cursor';
  constructor() {
    super('cursor is not one this server issued; drop it to start from the first page');
    this.name = 'InvalidCursorError';
  }
}

// created_at to the microsecond, in a form that reads back exactly whatever the server's DateStyle.
const CURSOR_TIME_SQL = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const Cursor = z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().min(1)]);

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  const parsed = Cursor.safeParse(decoded);
  if (!parsed.success || Number.isNaN(Date.parse(parsed.data[0]))) throw new InvalidCursorError();
  return parsed.data;
}

/** Newest first, in keyset pages: a page never repeats or skips a session, however many arrive meanwhile. */
export async function listSessions(db: Queryable, filter: SessionFilter): Promise<{ sessions: SessionView[]; next_cursor: string | null }> {
  if (!Number.isInteger(filter.limit) || filter.limit < 1) throw new RangeError('limit must be a positive integer');
  const params: unknown[] = [];
  const param = (value: unknown): string => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.outcome !== undefined) where.push(`outcome = ${param(filter.outcome)}`);
  if (filter.status !== undefined) where.push(`status = ${param(filter.status)}`);
  if (filter.blocker !== undefined) where.push(`blocker = ${param(filter.blocker)}`);
  if (filter.entity_id !== undefined) where.push(`id IN (SELECT session_id FROM session_entities WHERE slug = ${param(filter.entity_id)})`);
  if (filter.since !== undefined) where.push(`last_active_at >= ${param(filter.since.toISOString())}`);
  if (filter.cursor !== undefined) {
    const [createdAt, id] = decodeCursor(filter.cursor);
    where.push(`(created_at, id) < (${param(createdAt)}::timestamptz, ${param(id)})`);
  }
  // One row more than asked says whether another page exists.
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT ${VIEW_COLUMNS}, ${CURSOR_TIME_SQL} AS cursor_created_at FROM sessions
     ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit + 1)}`,
    params,
  );
  const page = rows.slice(0, filter.limit);
  const last = page.at(-1);
  const next_cursor =
    rows.length > filter.limit && last !== undefined ? encodeCursor(z.string().parse(last.cursor_created_at), z.string().parse(last.id)) : null;
  return { sessions: page.map(toView), next_cursor };
}

export async function getSession(db: Queryable, id: string): Promise<SessionView | null> {
  const { rows } = await db.query(`SELECT ${VIEW_COLUMNS} FROM sessions WHERE id = $1`, [id]);
  return rows[0] === undefined ? null : toView(rows[0]);
}

export interface UnfinishedSession {
  id: string;
  goal: string | null;
  summary: string | null;
  blocker: string | null;
  outcome: 'partial' | 'failed';
  closed_at: string;
}

const UnfinishedRow = z.object({
  id: z.string(),
  goal: z.string().nullable(),
  summary: z.string().nullable(),
  blocker: z.string().nullable(),
  outcome: z.enum(['partial', 'failed']),
  closed_at: z.date(),
});

/** Sessions that ended partial or failed since `since`, newest first: what a new goal should pick up from. */
export async function recentUnfinishedSessions(
  db: Queryable,
  options: { excludeSessionId: string; since: Date; limit: number },
): Promise<UnfinishedSession[]> {
  const { rows } = await db.query(
    `SELECT id, goal, summary, blocker, outcome, closed_at FROM sessions
     WHERE outcome IN ('partial', 'failed') AND closed_at >= $1 AND id <> $2
     ORDER BY closed_at DESC, id DESC LIMIT $3`,
    [options.since.toISOString(), options.excludeSessionId, options.limit],
  );
  return rows.map((raw) => {
    const row = UnfinishedRow.parse(raw);
    return { ...row, closed_at: row.closed_at.toISOString() };
  });
}

/** How many sessions are in each status. */
export async function sessionCounts(db: Queryable): Promise<Array<{ status: string; count: number }>> {
  const { rows } = await db.query<{ status: string; count: number }>('SELECT status, count(*)::int AS count FROM sessions GROUP BY status ORDER BY status');
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}
