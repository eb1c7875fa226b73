// The sessions read model: one row per session with what auditors list and filter on (counts, turns, top
// tools, entities touched, approvals, outcome, blocker, closed_at), and the queries that read it.
//
// Handles every session event: each one moves last_active_at. Besides that,
//   SessionStarted            creates the row (created_at, owner: the event's, or its actor's for an older event)
//   SessionHandedOver         owner
//   UserMessagePosted         counts a user message; a new turn begins
//   AssistantMessageRecorded  counts the turn's assistant message if this creates it; keeps the text for the blocker rules
//   ToolCallRequested         the same for the turn's message; counts the tool call, its tool, the entities it names
//   GoalSet                   goal and title
//   TaskCompleted             status, outcome, summary, closed_at, closed_by (the event's actor), blocker, dispute
//   SessionReopened           active again: outcome, summary, blocker, dispute, closed_at, closed_by, changes cleared
//   Approval*                 pending_approvals, approvals_requested, approvals_expired, the blocker facts and the
//                             status of the change the approval is for
//   TurnFailed                the blocker facts
//   Execution*                executions_count, failed_executions, targets (and entities) and the blocker facts
//                             (runs refused by the cap, unreachable, for a host key; failed, timed out, lost); the
//                             task's changes (task_changes: what the dispute rules read) and the dispute
//   ModelCallRecorded         model_calls, and the tokens the provider reported (summed; NULL until one is)
//   SessionDeleted            marks the row deleted (deleted_at, deleted_by); it stays for operators and auditors
// Events of a session without a row (never started), or of a deleted one, change nothing.
//
// A batch is applied in memory: the rows its events touch are loaded with one statement per table, the events
// are folded into them in log order, and each changed row is written once (src/projections/batch.ts).
//
// Past 500 lines on purpose: the fold and the queries share the row's shape and the view's SQL, and the list's
// keyset and `since` planning (the larger half) reads that shape column by column.
import { z } from 'zod';
import { PREPARED, type Queryable, type Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import { BLOCKER_RULES_VERSION, type BlockerEvidence, deriveBlocker } from '../domain/session/blocker.ts';
import { closedByNomos } from '../domain/session/abandon.ts';
import { CHANGE_COMMAND_CHARS, type Change, type ChangeStatus, DISPUTE_RULES_VERSION, type Dispute, deriveDispute, isChange } from '../domain/session/dispute.ts';
import { entitySlugsIn } from '../domain/session/entities.ts';
import { isLostRun } from '../domain/session/state.ts';
import { Actor, actorName } from '../domain/messages.ts';
import { Outcome, type RefusalReason, sessionEventSchemas, type SessionEvent, type TurnFailureReason } from '../domain/session/events.ts';
import { RowSet, type TableShape } from './batch.ts';
import { livePositionSql } from './checkpoints.ts';
import type { Projection } from './projection.ts';
import { byteOrder, occurredAt, sessionEventsIn } from './rows.ts';

/** Tables and rules together: the blocker rules' version is part of it, so new rules rebuild the model. */
// 4: the blocker facts of migration 016. 5: session_entities.created_at (migration 020). 6: owner, and deleted
// sessions kept, marked (migration 021). 7: model calls and their tokens (migration 023). 8: closed_by, the task's
// changes and the outcome's dispute (migration 028).
const TABLES_VERSION = 8;

// ---- the projection ----

export interface ToolCount {
  name: string;
  count: number;
}

/** A sessions row as the projection writes it (the generated counts are left to the database). */
interface SessionRow {
  [column: string]: unknown;
  id: string;
  title: string | null;
  goal: string | null;
  status: 'active' | 'done' | 'failed';
  outcome: Outcome | null;
  summary: string | null;
  blocker: string | null;
  blocker_evidence: BlockerEvidence | null;
  pending_approval_ids: string[];
  approvals_requested: number;
  approvals_expired: number;
  user_message_count: number;
  assistant_message_count: number;
  tool_call_count: number;
  /** The five most called tools, most called first, then by name (bytewise). */
  top_tools: ToolCount[];
  /** Entity slugs the session's tool calls and executions named, sorted bytewise; session_entities holds the same set. */
  entities: readonly string[];
  /** Targets commands ran on, sorted bytewise. */
  targets: readonly string[];
  executions_count: number;
  failed_executions: number;
  created_at: string;
  last_active_at: string;
  closed_at: string | null;
  /** role:id of whom the session belongs to. */
  owner: string | null;
  deleted_at: string | null;
  /** role:id of who deleted it. */
  deleted_by: string | null;
  /** Recorded model calls, failed ones too; NULL in a session none was recorded for (a log before they were). */
  model_calls: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_input_tokens: number | null;
  /** role:id of who completed the task; null while open. */
  closed_by: string | null;
  /** A success the log contradicts (src/domain/session/dispute.ts), and its evidence. */
  outcome_disputed: boolean;
  dispute: Dispute | null;
  /** The current task's changes as the dispute rules read them. */
  task_changes: Change[];
  // Facts the blocker rules read; task_* count since the session (re)opened.
  turn_message_id: string | null;
  last_assistant_text: string | null;
  last_turn_failure: TurnFailureReason | null;
  task_approvals_expired: number;
  task_approvals_denied: number;
  task_approvals_orphaned: number;
  task_approvals_requested: number;
  /** Refused by the retry cap. */
  task_executions_refused: number;
  task_executions_timed_out: number;
  task_executions_failed: number;
  task_executions_lost: number;
  task_executions_unreachable: number;
  task_executions_host_key_refused: number;
}

/** The blocker facts a task starts with: all zero, in a started session and after a reopen. */
const NEW_TASK = {
  task_approvals_expired: 0,
  task_approvals_denied: 0,
  task_approvals_orphaned: 0,
  task_approvals_requested: 0,
  task_executions_refused: 0,
  task_executions_timed_out: 0,
  task_executions_failed: 0,
  task_executions_lost: 0,
  task_executions_unreachable: 0,
  task_executions_host_key_refused: 0,
} as const satisfies Partial<SessionRow>;

/** A started session's row: the table's column defaults (test/projections/batching.test.ts holds them equal). */
function startedSession(id: string, at: string, owner: string | null): SessionRow {
  return {
    id,
    title: null,
    goal: null,
    status: 'active',
    outcome: null,
    summary: null,
    blocker: null,
    blocker_evidence: null,
    pending_approval_ids: [],
    approvals_requested: 0,
    approvals_expired: 0,
    user_message_count: 0,
    assistant_message_count: 0,
    tool_call_count: 0,
    top_tools: [],
    entities: [],
    targets: [],
    executions_count: 0,
    failed_executions: 0,
    created_at: at,
    last_active_at: at,
    closed_at: null,
    owner,
    deleted_at: null,
    deleted_by: null,
    model_calls: null,
    input_tokens: null,
    output_tokens: null,
    cached_input_tokens: null,
    closed_by: null,
    outcome_disputed: false,
    dispute: null,
    task_changes: [],
    turn_message_id: null,
    last_assistant_text: null,
    last_turn_failure: null,
    ...NEW_TASK,
  };
}

const SESSIONS: TableShape<SessionRow> = {
  table: 'sessions',
  key: ['id'],
  columns: Object.keys(startedSession('', '', null)),
};

interface ToolCountRow {
  [column: string]: unknown;
  session_id: string;
  name: string;
  count: number;
}
const TOOL_COUNTS: TableShape<ToolCountRow> = { table: 'session_tool_counts', key: ['session_id', 'name'], columns: ['session_id', 'name', 'count'] };

interface EntityRow {
  [column: string]: unknown;
  session_id: string;
  slug: string;
  /** The session's, so that a list of the entity's sessions walks them in page order (migrations/020). */
  created_at: string;
}
const ENTITIES: TableShape<EntityRow> = { table: 'session_entities', key: ['session_id', 'slug'], columns: ['session_id', 'slug', 'created_at'] };

/** The values of `list` with `added`, once each, sorted bytewise (as COLLATE "C" sorts them). */
// Both run for most events of a rebuild: they return the list itself when nothing changes and build at most one
// new array otherwise (the spread-and-sort versions were a sixth of a rebuild's allocations, profiled).
function sortedUnion(list: readonly string[], added: readonly string[]): readonly string[] {
  if (added.every((value) => list.includes(value))) return list;
  return [...new Set([...list, ...added])].sort(byteOrder);
}

const ranksBefore = (a: ToolCount, b: ToolCount) => a.count > b.count || (a.count === b.count && byteOrder(a.name, b.name) < 0);

/**
 * The top five after one more call of `name`, whose count is now `count`: only its count grew, so no other tool
 * can climb. `top` is in rank order (this function made it), so the grown tool is placed, not sorted in.
 */
function topToolsWith(top: readonly ToolCount[], name: string, count: number): ToolCount[] {
  const grown = { name, count };
  const out: ToolCount[] = [];
  let placed = false;
  for (const tool of top) {
    if (tool.name === name) continue;
    if (!placed && ranksBefore(grown, tool)) {
      out.push(grown);
      placed = true;
    }
    out.push(tool);
  }
  if (!placed) out.push(grown);
  out.length = Math.min(out.length, 5);
  return out;
}

/** One batch's rows of the three tables, loaded once, changed in memory, written once. */
class SessionsBatch {
  private readonly sessions = new RowSet(SESSIONS);
  private readonly toolCounts = new RowSet(TOOL_COUNTS);
  private readonly entities = new RowSet(ENTITIES);

  /** Loads every session the events name, and the tool counts of those that call tools. */
  async load(tx: Queryable, events: readonly { sessionId: string; event: SessionEvent }[]): Promise<void> {
    const ids = new Set<string>();
    const counted = new Set<string>();
    for (const { sessionId, event } of events) {
      ids.add(sessionId);
      if (event.type === 'ToolCallRequested') counted.add(sessionId);
    }
    await Promise.all([this.sessions.load(tx, [...ids].map((id) => ({ id }))), this.toolCounts.load(tx, [...counted].map((session_id) => ({ session_id })), ['session_id'])]);
  }

  flush(tx: Transaction): void {
    this.toolCounts.flush(tx);
    this.entities.flush(tx);
    this.sessions.flush(tx);
  }

  /** `metadata`: the stored event's, read only for who started (an event before owners) or deleted the session. */
  apply(id: string, e: SessionEvent, at: string, metadata: Record<string, unknown>): void {
    const row = this.sessions.get({ id });
    if (e.type === 'SessionStarted') {
      if (row === undefined) this.sessions.put(startedSession(id, at, nameOf(e.data.owner ?? metadata.actor)));
      return;
    }
    if (row === undefined || row.deleted_at !== null) return;
    if (e.type === 'SessionDeleted') {
      row.deleted_at = at;
      row.deleted_by = nameOf(metadata.actor);
      this.sessions.put(row);
      return;
    }
    row.last_active_at = at;
    this.fold(row, e, at, metadata);
    this.sessions.put(row);
  }

  private fold(row: SessionRow, e: Exclude<SessionEvent, { type: 'SessionStarted' | 'SessionDeleted' }>, at: string, metadata: Record<string, unknown>): void {
    switch (e.type) {
      case 'SessionHandedOver':
        row.owner = actorName(e.data.to);
        return;
      case 'UserMessagePosted':
        row.user_message_count += 1;
        row.turn_message_id = null;
        row.last_turn_failure = null;
        return;
      case 'AssistantMessageRecorded':
        this.openTurnMessage(row, e.data.message_id);
        row.last_assistant_text = e.data.text;
        row.last_turn_failure = null;
        return fillBlocker(row);
      case 'ToolCallRequested': {
        this.openTurnMessage(row, e.data.message_id);
        row.tool_call_count += 1;
        const tool = { session_id: row.id, name: e.data.name, count: 0 };
        const count = (this.toolCounts.get(tool)?.count ?? 0) + 1;
        tool.count = count;
        this.toolCounts.put(tool);
        row.top_tools = topToolsWith(row.top_tools, e.data.name, count);
        this.addEntities(row, entitySlugsIn(e.data.args));
        return;
      }
      case 'GoalSet':
        row.goal = e.data.goal;
        row.title = e.data.title;
        return;
      case 'TaskCompleted':
        row.status = e.data.status;
        row.outcome = e.data.outcome;
        row.summary = e.data.summary;
        row.closed_at = at;
        row.closed_by = nameOf(metadata.actor);
        // The blocker of the task before a reopen is gone; this task's, if any, follows from the facts.
        row.blocker = null;
        row.blocker_evidence = null;
        setDispute(row);
        return setBlocker(row);
      case 'SessionReopened':
        Object.assign(row, {
          status: 'active',
          outcome: null,
          summary: null,
          blocker: null,
          blocker_evidence: null,
          closed_at: null,
          closed_by: null,
          outcome_disputed: false,
          dispute: null,
          task_changes: [],
          ...NEW_TASK,
        });
        return;
      case 'ApprovalRequested':
        row.pending_approval_ids = [...row.pending_approval_ids, e.data.approval_id];
        row.approvals_requested += 1;
        row.task_approvals_requested += 1;
        return changeTo(row, (c) => c.execution_id === e.data.execution_id, 'awaiting_approval', e.data.approval_id);
      case 'ApprovalGranted':
        resolveApproval(row, e.data.approval_id, {});
        return changeTo(row, (c) => c.approval_id === e.data.approval_id, 'approved');
      case 'ApprovalDenied':
        resolveApproval(row, e.data.approval_id, { denied: true });
        return changeTo(row, (c) => c.approval_id === e.data.approval_id, 'denied');
      case 'ApprovalExpired':
        resolveApproval(row, e.data.approval_id, { expired: true });
        return changeTo(row, (c) => c.approval_id === e.data.approval_id, 'expired');
      case 'ApprovalCancelled':
        resolveApproval(row, e.data.approval_id, { orphaned: e.data.reason.startsWith('orphaned') });
        return changeTo(row, (c) => c.approval_id === e.data.approval_id, 'cancelled');
      case 'TurnFailed':
        row.last_turn_failure = e.data.reason;
        return fillBlocker(row);
      case 'ExecutionRequested':
        row.executions_count += 1;
        if (!row.targets.includes(e.data.target)) row.targets = sortedUnion(row.targets, [e.data.target]);
        this.addEntities(row, [e.data.target]);
        if (isChange(e.data.verdict.risk_class)) {
          const { execution_id, target, command, verdict } = e.data;
          row.task_changes = [...row.task_changes, { execution_id, target, command: command.slice(0, CHANGE_COMMAND_CHARS), risk_class: verdict.risk_class, approval_id: null, status: 'requested' }];
        }
        return;
      case 'ExecutionStarted':
        return changeTo(row, (c) => c.execution_id === e.data.execution_id, 'running');
      case 'ExecutionSucceeded':
        return changeTo(row, (c) => c.execution_id === e.data.execution_id, 'succeeded');
      case 'ExecutionFailed':
        row.failed_executions += 1;
        if (isLostRun(e.data)) row.task_executions_lost += 1;
        else row.task_executions_failed += 1;
        changeTo(row, (c) => c.execution_id === e.data.execution_id, 'failed');
        return fillBlocker(row);
      case 'ExecutionTimedOut':
        row.failed_executions += 1;
        row.task_executions_timed_out += 1;
        changeTo(row, (c) => c.execution_id === e.data.execution_id, 'timed_out');
        return fillBlocker(row);
      case 'ExecutionRefused':
        countRefusal(row, e.data.reason);
        changeTo(row, (c) => c.execution_id === e.data.execution_id, 'refused');
        return fillBlocker(row);
      case 'ModelCallRecorded':
        row.model_calls = (row.model_calls ?? 0) + 1;
        row.input_tokens = plus(row.input_tokens, e.data.input_tokens);
        row.output_tokens = plus(row.output_tokens, e.data.output_tokens);
        row.cached_input_tokens = plus(row.cached_input_tokens, e.data.cached_input_tokens);
        return;
      case 'ToolCallCompleted':
      case 'GoalSuperseded':
      case 'PlanProposed':
      case 'PlanStepsReplaced':
      case 'PlanStepUpdated':
      case 'AssentOpened':
      case 'AssentClosed':
      case 'TurnStarted':
      case 'TurnCancelRequested':
      case 'TurnEnded':
        return; // only last_active_at
      default: {
        const unhandled: never = e;
        throw new Error(`sessions projection: unhandled event ${JSON.stringify(unhandled)}`);
      }
    }
  }

  /** The turn's assistant message is counted by the event that creates it. */
  private openTurnMessage(row: SessionRow, messageId: string): void {
    if (row.turn_message_id !== messageId) row.assistant_message_count += 1;
    row.turn_message_id = messageId;
  }

  private addEntities(row: SessionRow, slugs: readonly string[]): void {
    for (const slug of slugs) this.entities.put({ session_id: row.id, slug, created_at: row.created_at });
    row.entities = sortedUnion(row.entities, slugs);
  }
}

/** A sum of the provider's figures: unknown (null) until one is reported. */
function plus(sum: number | null, reported: number | null): number | null {
  return reported === null ? sum : (sum ?? 0) + reported;
}

/** An actor as the table writes it (role:id); null when the metadata has none this schema knows. */
function nameOf(actor: unknown): string | null {
  const parsed = Actor.safeParse(actor);
  return parsed.success ? actorName(parsed.data) : null;
}

/** Resolving an approval that is not pending (already resolved) counts nothing. */
function resolveApproval(row: SessionRow, approvalId: string, counts: { expired?: boolean; denied?: boolean; orphaned?: boolean }): void {
  if (!row.pending_approval_ids.includes(approvalId)) return;
  row.pending_approval_ids = row.pending_approval_ids.filter((id) => id !== approvalId);
  if (counts.expired === true) {
    row.approvals_expired += 1;
    row.task_approvals_expired += 1;
  }
  if (counts.denied === true) row.task_approvals_denied += 1;
  if (counts.orphaned === true) row.task_approvals_orphaned += 1;
}

/**
 * The task's change `which` picks moves to `status` (and is bound to its approval); a closed task's dispute
 * follows, as a run may end after complete_task. A session without that change (a reversible_low execution, or
 * one of a task before a reopen) changes nothing.
 */
function changeTo(row: SessionRow, which: (change: Change) => boolean, status: ChangeStatus, approvalId?: string): void {
  const at = row.task_changes.findIndex(which);
  if (at < 0) return;
  const current = row.task_changes[at]!;
  row.task_changes = row.task_changes.with(at, { ...current, status, approval_id: approvalId ?? current.approval_id });
  if (row.status !== 'active') setDispute(row);
}

function setDispute(row: SessionRow): void {
  const dispute = deriveDispute(row.outcome, row.task_changes);
  row.outcome_disputed = dispute !== null;
  row.dispute = dispute;
}

/** Refusals where nothing was attempted (already running, a binding mismatch) are no blocker fact. */
function countRefusal(row: SessionRow, reason: RefusalReason): void {
  switch (reason) {
    case 'retry_cap':
      row.task_executions_refused += 1;
      return;
    case 'unreachable':
      row.task_executions_unreachable += 1;
      return;
    case 'host_key_mismatch':
      row.task_executions_host_key_refused += 1;
      return;
    case 'lost':
      row.task_executions_lost += 1;
      return;
    case 'already_running':
    case 'binding_mismatch':
    case 'session_deleted':
    case 'policy_denied':
      return;
    default: {
      const unhandled: never = reason;
      throw new Error(`sessions projection: unhandled refusal ${String(unhandled)}`);
    }
  }
}

/**
 * The agent's final text usually trails complete_task in the same turn, and often says what blocked it; a run
 * may end after it too. What arrives while the session is closed may fill in a blocker that is still unknown,
 * but never replaces a known one.
 */
function fillBlocker(row: SessionRow): void {
  if (row.status === 'active' || row.outcome === null || (row.blocker !== null && row.blocker !== 'unknown')) return;
  setBlocker(row);
}

function setBlocker(row: SessionRow): void {
  if (row.outcome === null) return;
  const derived = deriveBlocker({
    outcome: row.outcome,
    summary: row.summary,
    // complete_task cancels still-pending approvals as orphaned just before TaskCompleted: those were pending at the end.
    approvalsPendingAtEnd: row.pending_approval_ids.length + row.task_approvals_orphaned,
    approvalsExpired: row.task_approvals_expired,
    approvalsDenied: row.task_approvals_denied,
    approvalsRequested: row.task_approvals_requested,
    executionsRefused: row.task_executions_refused,
    executionsTimedOut: row.task_executions_timed_out,
    executionsFailed: row.task_executions_failed,
    executionsLost: row.task_executions_lost,
    executionsUnreachable: row.task_executions_unreachable,
    executionsHostKeyRefused: row.task_executions_host_key_refused,
    lastTurnFailure: row.last_turn_failure,
    lastAssistantText: row.last_assistant_text,
    closedByNomos: closedByNomos(row.closed_by),
  });
  if (derived === null) return;
  row.blocker = derived.blocker;
  row.blocker_evidence = derived.evidence;
}

async function applyBatch(tx: Transaction, stored: readonly ProjectedEvent[]): Promise<void> {
  const events = sessionEventsIn(stored);
  const batch = new SessionsBatch();
  await batch.load(tx, events);
  for (const { sessionId, event, stored: one } of events) batch.apply(sessionId, event, occurredAt(one), one.metadata);
  batch.flush(tx);
}

export const sessionsProjection: Projection = {
  name: 'sessions',
  // Each rules version below 100, so that each change of one gives a version of its own.
  version: TABLES_VERSION * 10_000 + DISPUTE_RULES_VERSION * 100 + BLOCKER_RULES_VERSION,
  tables: ['session_tool_counts', 'session_entities', 'sessions'],
  // Every session event, because every one of them is activity that moves last_active_at.
  handles: new Set(Object.keys(sessionEventSchemas)),
  applyBatch,
};

// ---- queries ----

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
  /** Whom the session belongs to (null only in a row written before owners, until the model is rebuilt). */
  owner: Actor | null;
  /** Deleted sessions are listed only when asked for (include_deleted), and only to operators and auditors. */
  deleted: boolean;
  deleted_at: string | null;
  deleted_by: Actor | null;
  /** Model calls recorded (failed ones too) and the tokens the provider reported, summed; null where none were recorded. */
  model_calls: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cached_input_tokens: number | null;
  /** Who completed the task (system:executor when Nomos closed it as abandoned); null while open. */
  closed_by: Actor | null;
  /** A success the log contradicts: every change of the task was denied, refused or failed. */
  outcome_disputed: boolean;
  /** The evidence: in words, and each change of the task and how it ended. */
  dispute: Dispute | null;
}

/** A timestamp as toISOString writes it (UTC, milliseconds), formatted by the database: no Date is parsed per row. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A role:id column as the actor object the API names actors with ({role, id}); the id may hold colons. */
const actorJson = (column: string) =>
  `CASE WHEN ${column} IS NOT NULL THEN json_build_object('role', split_part(${column}, ':', 1), 'id', substr(${column}, strpos(${column}, ':') + 1)) END`;

// Each field of SessionView, in its order, as the SQL that yields it with its JSON type: a row is the view as it
// stands (the table's types and checks guarantee the shapes, so there is no per-row validation on the read path).
const VIEW_SQL: Record<keyof SessionView, string> = {
  id: 'id',
  title: 'title',
  goal: 'goal',
  status: 'status',
  outcome: 'outcome',
  summary: 'summary',
  blocker: 'blocker',
  // json (not jsonb) keeps the keys in this order.
  blocker_evidence: `CASE WHEN blocker_evidence IS NOT NULL THEN json_build_object('source', blocker_evidence->>'source', 'detail', blocker_evidence->>'detail') END`,
  pending_approvals: 'pending_approvals',
  approvals_requested: 'approvals_requested',
  approvals_expired: 'approvals_expired',
  message_count: 'message_count',
  user_message_count: 'user_message_count',
  assistant_message_count: 'assistant_message_count',
  tool_call_count: 'tool_call_count',
  turn_count: 'turn_count',
  top_tools: 'top_tools',
  entities: 'entities',
  executions_count: 'executions_count',
  failed_executions: 'failed_executions',
  targets: 'targets',
  created_at: iso('created_at'),
  last_active_at: iso('last_active_at'),
  closed_at: iso('closed_at'),
  duration_seconds: 'greatest(0, floor(extract(epoch FROM coalesce(closed_at, now()) - created_at)))::integer',
  owner: actorJson('owner'),
  deleted: 'deleted_at IS NOT NULL',
  deleted_at: iso('deleted_at'),
  deleted_by: actorJson('deleted_by'),
  model_calls: 'model_calls',
  // float8: a JSON number from pg too (bigint comes back as a string), exact below 2^53.
  input_tokens: 'input_tokens::float8',
  output_tokens: 'output_tokens::float8',
  cached_input_tokens: 'cached_input_tokens::float8',
  closed_by: actorJson('closed_by'),
  outcome_disputed: 'outcome_disputed',
  dispute: 'dispute',
};

/** The fields a list may be narrowed to (GET /sessions?fields=…), in the order a view has them. */
export const SESSION_FIELDS = Object.keys(VIEW_SQL) as ReadonlyArray<keyof SessionView>;

const VIEW_COLUMNS = SESSION_FIELDS.map((field) => `${VIEW_SQL[field]} AS ${field}`).join(', ');

export interface SessionFilter {
  outcome?: Outcome;
  status?: 'active' | 'done' | 'failed';
  /** Sessions whose tool calls named this entity slug. */
  entity_id?: string;
  blocker?: string;
  /** Only the sessions whose success the log contradicts (true), or only the others (false). */
  outcome_disputed?: boolean;
  /** role:id: only the sessions this principal owns. */
  owner?: string;
  /** Deleted sessions too (marked deleted); without it they are left out. */
  include_deleted?: boolean;
  /** last_active_at >= since */
  since?: Date;
  /** input_tokens + output_tokens >= min_tokens (sessions with no reported tokens are left out). */
  min_tokens?: number;
  limit: number;
  cursor?: string;
}

/** A list of views narrowed to some of their fields (always with id, which pages are keyed on). */
export type SessionFields = ReadonlyArray<keyof SessionView>;

export class InvalidCursorError extends Error {
  readonly code = 'invalid_cursor';
  constructor() {
    super('cursor is not one this server issued; drop it to start from the first page');
    this.name = 'InvalidCursorError';
  }
}

// created_at to the microsecond, in a form that reads back exactly whatever the server's DateStyle.
const cursorTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const Cursor = z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().min(1)]);

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function isCursorTime(time: string): boolean {
  const ms = Date.parse(time);
  return !Number.isNaN(ms) && !time.startsWith('0000') && new Date(ms).toISOString().slice(0, 23) === time.slice(0, 23);
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
  // A time PostgreSQL can hold, as this server writes it: the year 0000 and a 30 February read back
  // differently (or not at all) and would fail inside the query instead.
  if (!parsed.success || !isCursorTime(parsed.data[0])) throw new InvalidCursorError();
  return parsed.data;
}

/** Newest first, in keyset pages: a page never repeats or skips a session, however many arrive meanwhile. */
export async function listSessions(db: Queryable, filter: SessionFilter): Promise<{ sessions: SessionView[]; next_cursor: string | null }> {
  return (await listSessionFields(db, filter, SESSION_FIELDS)) as { sessions: SessionView[]; next_cursor: string | null };
}

/**
 * `since` filters on last_active_at while pages follow created_at, and PostgreSQL cannot know the two move
 * together. With many matches it takes the index of when sessions were active, then fetches and sorts every
 * match for each page where a scan in page order finds a page's rows at once: recently active sessions are
 * mostly recently created. But a page-order scan that runs out of matches reads on to the oldest session, so it
 * is only right while more matches than a page holds are left after the cursor. The statement finds out first:
 * it collects up to a page and one of the matches (every condition applied, through the index of the hour each
 * session was last active in, `active_hour`, and last_active_at checked on the rows that hour admits; an index
 * on last_active_at itself would cost every event's update of the row its in-place update: migrations/018) and
 * counts them. More than a page: the page-order branch runs and stops at a page and one. Otherwise this is the
 * last page and those matches are all of it. Each way is a branch that runs only if the count says so
 * (PostgreSQL checks a condition without columns once, before it starts the branch), and only the last page
 * reads every match after the cursor, once.
 */
function sinceBranches(select: (conditions: readonly string[]) => string, where: readonly string[], since: string, limitPlusOne: string): string {
  const active = [`active_hour >= date_trunc('hour', ${since}::timestamptz AT TIME ZONE 'UTC')`, `last_active_at >= ${since}::timestamptz`];
  const matches = `SELECT id FROM sessions WHERE ${[...where, ...active].join(' AND ')} LIMIT ${limitPlusOne}`;
  const many = `SELECT count(*) >= ${limitPlusOne} AS yes FROM matches`;
  const pageOrder = select([...where, `last_active_at >= ${since}::timestamptz`, '(SELECT yes FROM many)']);
  const lastPage = select(['id IN (SELECT id FROM matches)', 'NOT (SELECT yes FROM many)']);
  return `WITH matches AS MATERIALIZED (${matches}), many AS (${many}) SELECT * FROM ((${pageOrder}) UNION ALL (${lastPage})) chosen ORDER BY created_at DESC, id DESC`;
}

/** listSessions with only the given fields of each view (id always among them): less to read, send and parse. */
export async function listSessionFields(
  db: Queryable,
  filter: SessionFilter,
  fields: SessionFields,
): Promise<{ sessions: Array<Partial<SessionView>>; next_cursor: string | null }> {
  const page = await listSessionsJson(db, filter, fields);
  return { sessions: JSON.parse(page.sessions) as Array<Partial<SessionView>>, next_cursor: page.next_cursor };
}

/**
 * Each chosen field under its name, in the view's order, as one JSON text the database writes: the page's rows
 * go through a lateral subquery naming each field, whose row row_to_json writes with those names in that order
 * (PostgreSQL flattens the subquery into a named ROW; it costs about two thirds of json_build_object with the
 * same fields, measured on 20 000 rows). The server passes the text on as it is: no row decoding and no
 * serialising in Node. Building it is the largest part of a 1 000-session page's time in PostgreSQL 15
 * (bench/profile-notes.md, "Audit ratio").
 */
const viewRow = (fields: SessionFields) => `LATERAL (SELECT ${fields.map((field) => `${VIEW_SQL[field]} AS ${field}`).join(', ')}) v`;
const VIEW_ROW = viewRow(SESSION_FIELDS);

/**
 * The page's rows (every column of sessions, in page order) as (id, view, cursor_created_at), in the same
 * order, and with `names` the position those projections had reached as a column of each row: read once (an
 * uncorrelated subquery) in the page's snapshot. The page's order is kept without sorting it again.
 */
const viewed = (page: string, view: string, names: string | null) =>
  `SELECT ${names === null ? '' : `${livePositionSql(names)} AS as_of, `}page.id, row_to_json(v)::text AS view, ${cursorTime('page.created_at')} AS cursor_created_at
   FROM (${page}) page, ${view} ORDER BY page.created_at DESC, page.id DESC`;

/**
 * The position joined to the viewed page: one row with a null id when the page is empty. The page's order is
 * restored from the cursor's time (microseconds, fixed width: bytewise order is time order) and the id.
 */
const headedByPosition = (page: string, view: string, names: string) =>
  `SELECT head.as_of, page.id, page.view, page.cursor_created_at FROM (SELECT ${livePositionSql(names)} AS as_of) head
   LEFT JOIN LATERAL (${viewed(page, view, null)}) page ON true ORDER BY page.cursor_created_at COLLATE "C" DESC, page.id DESC`;

/** A page of listSessionFields as the JSON text of its array of views, and the cursor of the next page. */
export interface SessionsJsonPage {
  readonly sessions: string;
  readonly next_cursor: string | null;
  /** With `positionOf`: the position those projections had reached in the snapshot the page was read in. */
  readonly as_of_position?: number;
}

/**
 * listSessionFields as JSON text. With `positionOf` (projection names) the same statement reads where those
 * projections stand: the page reflects exactly that position, and the answer costs one round trip, not two.
 */
export async function listSessionsJson(
  db: Queryable,
  filter: SessionFilter,
  fields: SessionFields,
  options: { positionOf?: readonly string[] } = {},
): Promise<SessionsJsonPage> {
  const chosen = new Set<keyof SessionView>(['id', ...fields]);
  const view = fields === SESSION_FIELDS ? VIEW_ROW : viewRow(SESSION_FIELDS.filter((field) => chosen.has(field)));
  if (!Number.isInteger(filter.limit) || filter.limit < 1) throw new RangeError('limit must be a positive integer');
  const params: unknown[] = [];
  const param = (value: unknown): string => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.outcome !== undefined) where.push(`outcome = ${param(filter.outcome)}`);
  if (filter.status !== undefined) where.push(`status = ${param(filter.status)}`);
  if (filter.blocker !== undefined) where.push(`blocker = ${param(filter.blocker)}`);
  if (filter.outcome_disputed !== undefined) where.push(filter.outcome_disputed ? 'outcome_disputed' : 'NOT outcome_disputed');
  if (filter.owner !== undefined) where.push(`owner = ${param(filter.owner)}`);
  if (filter.include_deleted !== true) where.push('deleted_at IS NULL');
  if (filter.min_tokens !== undefined) where.push(`coalesce(input_tokens, 0) + coalesce(output_tokens, 0) >= ${param(filter.min_tokens)}::bigint AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)`);
  const entity = filter.entity_id === undefined ? null : param(filter.entity_id);
  // An entity's sessions are walked newest first through session_entities' index in page order, and the walk
  // stops at a page (migrations/020). With `since` the matches come through the index of when sessions were
  // active instead (sinceBranches), and the entity is a condition on them.
  const walk = entity !== null && filter.since === undefined;
  if (entity !== null && !walk) where.push(`id IN (SELECT session_id FROM session_entities WHERE slug = ${entity})`);
  const after = filter.cursor === undefined ? null : decodeCursor(filter.cursor);
  const afterCursor = after === null ? null : `(${walk ? 'e.created_at, e.session_id' : 'created_at, id'}) < (${param(after[0])}::timestamptz, ${param(after[1])})`;
  if (afterCursor !== null) where.push(afterCursor);
  // One row more than asked says whether another page exists.
  const limit = param(filter.limit + 1);
  const select = (conditions: readonly string[]) =>
    walk
      ? `SELECT s.* FROM session_entities e JOIN sessions s ON s.id = e.session_id WHERE ${[`e.slug = ${entity}`, ...conditions].join(' AND ')}
         ORDER BY e.created_at DESC, e.session_id DESC LIMIT ${limit}`
      : `SELECT * FROM sessions ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
  const page = filter.since === undefined ? select(where) : sinceBranches(select, where, param(filter.since.toISOString()), limit);
  type Row = { id: string | null; view: string; cursor_created_at: string; as_of?: number | string };
  const names = options.positionOf === undefined ? null : param(options.positionOf);
  // Prepared for the default fields (a fixed set of texts, one per combination of filters): planning was most of
  // PostgreSQL's time for a page. Chosen fields make texts without end, which are not kept.
  const prepared = view === VIEW_ROW ? PREPARED : undefined;
  let result = await db.query<Row>(viewed(page, view, names), params, prepared);
  // An empty page has no row to carry the position: ask again with the position heading the page (joined, so
  // it is there without rows; it costs a sort of the page, hence not the first way). Whatever this statement
  // finds, page and position again come from one snapshot.
  if (result.rows.length === 0 && names !== null) result = await db.query<Row>(headedByPosition(page, view, names), params, prepared);
  const rows = result.rows.filter((row) => row.id !== null);
  const shown = rows.length > filter.limit ? rows.slice(0, filter.limit) : rows;
  const last = shown.at(-1);
  const next_cursor = rows.length > filter.limit && last !== undefined ? encodeCursor(last.cursor_created_at, last.id!) : null;
  const as_of = result.rows[0]?.as_of;
  return { sessions: `[${shown.map((row) => row.view).join(',')}]`, next_cursor, ...(as_of !== undefined && { as_of_position: Number(as_of) }) };
}

/** The session; a deleted one only with includeDeleted (for operators and auditors), marked deleted. */
export async function getSession(db: Queryable, id: string, options: { includeDeleted?: boolean } = {}): Promise<SessionView | null> {
  const deleted = options.includeDeleted === true ? '' : ' AND deleted_at IS NULL';
  const { rows } = await db.query<SessionView>(`SELECT ${VIEW_COLUMNS} FROM sessions WHERE id = $1${deleted}`, [id]);
  return rows[0] ?? null;
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
     WHERE outcome IN ('partial', 'failed') AND closed_at >= $1 AND id <> $2 AND deleted_at IS NULL
     ORDER BY closed_at DESC, id DESC LIMIT $3`,
    [options.since.toISOString(), options.excludeSessionId, options.limit],
  );
  return rows.map((raw) => {
    const row = UnfinishedRow.parse(raw);
    return { ...row, closed_at: row.closed_at.toISOString() };
  });
}

/** How many sessions are in each status (deleted ones left out). */
export async function sessionCounts(db: Queryable): Promise<Array<{ status: string; count: number }>> {
  const { rows } = await db.query<{ status: string; count: number }>('SELECT status, count(*)::int AS count FROM sessions WHERE deleted_at IS NULL GROUP BY status ORDER BY status');
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}
