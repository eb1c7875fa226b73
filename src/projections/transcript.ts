// The transcript read model: a session's messages in order, each assistant message with the tool calls of
// its turn, and the flat tool-call list audit scripts read.
//
//   UserMessagePosted         inserts the user message (a message with that id already there stays as it is)
//   AssistantMessageRecorded  creates the turn's assistant message if absent; sets its text (the last one is the turn's final text)
//   ToolCallRequested         creates the turn's assistant message if absent; inserts the tool call (next seq of the session)
//                             unless a call with that id is there already
//   ToolCallCompleted         result, error, status (failed when error is set), completed_at; a call not there is left alone
//   (SessionDeleted is not handled: a deleted session's transcript stays for operators and auditors; reads
//   reach it only through a session the API lets them read, with include_deleted=true)
//
// A batch takes at most two statements, whatever its size, all from a fold in memory. A read, when it requests
// calls: each such session's highest seq and which of the requested ids it holds already (a call's seq and
// whether it is inserted at all depend on them). One write for everything else. Nothing more is read: a message's row after
// the batch follows from what the batch does to it (insert if absent, or upsert its text), and a completion of
// a call stored before the batch is an UPDATE, a no-op for an unknown call; so big results never travel back.
import { z } from 'zod';
import { PREPARED, type Queryable, type Transaction } from '../ports/db.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import { Actor, Client } from '../domain/messages.ts';
import type { SessionEvent, SessionEventOf } from '../domain/session/events.ts';
import type { Projection } from './projection.ts';
import { isoOrNull, occurredAt, sessionEventsIn } from './rows.ts';

/** 2: tool calls carry the actor and the MCP client of their request. 3: a deleted session's rows are kept. */
const TRANSCRIPT_VERSION = 3;

interface MessageRow {
  session_id: string;
  id: string;
  role: 'user' | 'assistant';
  text: string | null;
  created_at: string;
  event_position: number;
}

interface ToolCallRow {
  session_id: string;
  id: string;
  seq: number;
  message_id: string;
  name: string;
  args: Record<string, unknown>;
  result: unknown;
  error: string | null;
  status: ToolCallStatus;
  requested_at: string;
  completed_at: string | null;
  result_original_bytes: number | null;
  actor: Actor | null;
  client: Client | null;
}

type Completion = Pick<ToolCallRow, 'session_id' | 'id' | 'result' | 'error' | 'status' | 'completed_at' | 'result_original_bytes'>;

/** A message as the batch leaves it: setsText overwrites the text of a stored message, otherwise a stored one wins. */
interface MessageWrite {
  readonly row: MessageRow;
  setsText: boolean;
}

/** What the batch needs to know of a session's stored tool calls before it requests more. */
interface StoredCalls {
  readonly maxSeq: number;
  /** The ids among those the batch requests that are stored already. */
  readonly ids: ReadonlySet<string>;
}

const NO_CALLS: StoredCalls = { maxSeq: 0, ids: new Set() };

interface TranscriptEvent {
  readonly sessionId: string;
  readonly event: SessionEvent;
  readonly at: string;
  readonly position: number;
  readonly metadata: Record<string, unknown>;
}

/** What a batch does to one session's rows, relative to the rows stored before it. */
class SessionChanges {
  readonly messages = new Map<string, MessageWrite>();
  /** Calls requested in the batch, with their completions folded in. */
  readonly requested = new Map<string, ToolCallRow>();
  /** Completions of calls stored before the batch, the last one of each call. */
  readonly completed = new Map<string, Completion>();
  private readonly stored: StoredCalls;
  private lastSeq: number;

  constructor(
    readonly sessionId: string,
    stored: StoredCalls,
  ) {
    this.stored = stored;
    this.lastSeq = stored.maxSeq;
  }

  apply({ event: e, at, position, metadata }: TranscriptEvent): void {
    switch (e.type) {
      case 'UserMessagePosted':
        this.createMessage(this.message(e.data.message_id, 'user', e.data.text, at, position));
        return;
      case 'AssistantMessageRecorded':
        this.setText(this.message(e.data.message_id, 'assistant', e.data.text, at, position));
        return;
      case 'ToolCallRequested':
        this.createMessage(this.message(e.data.message_id, 'assistant', null, at, position));
        this.request(e.data, at, metadata);
        return;
      case 'ToolCallCompleted':
        this.complete(e.data, at);
        return;
      case 'SessionDeleted':
      case 'SessionStarted':
      case 'SessionReopened':
      case 'GoalSet':
      case 'GoalSuperseded':
      case 'PlanProposed':
      case 'PlanStepsReplaced':
      case 'PlanStepUpdated':
      case 'TaskCompleted':
      case 'ApprovalRequested':
      case 'ApprovalGranted':
      case 'ApprovalDenied':
      case 'ApprovalExpired':
      case 'ApprovalCancelled':
      case 'TurnFailed':
      case 'TurnStarted':
      case 'TurnCancelRequested':
      case 'ModelCallRecorded':
      case 'TurnEnded':
      case 'ExecutionRequested':
      case 'ExecutionRefused':
      case 'ExecutionStarted':
      case 'ExecutionSucceeded':
      case 'ExecutionFailed':
      case 'ExecutionTimedOut':
      case 'AssentOpened':
      case 'AssentClosed':
      case 'SessionHandedOver':
        return; // not part of the transcript
      default: {
        const unhandled: never = e;
        throw new Error(`transcript projection: unhandled event ${JSON.stringify(unhandled)}`);
      }
    }
  }

  private message(id: string, role: MessageRow['role'], text: string | null, at: string, position: number): MessageRow {
    return { session_id: this.sessionId, id, role, text, created_at: at, event_position: position };
  }

  private createMessage(row: MessageRow): void {
    if (!this.messages.has(row.id)) this.messages.set(row.id, { row, setsText: false });
  }

  /** Whatever created the message, before or in the batch, the text is this one's now. */
  private setText(row: MessageRow): void {
    const write = this.messages.get(row.id);
    if (write === undefined) {
      this.messages.set(row.id, { row, setsText: true });
    } else {
      write.row.text = row.text;
      write.setsText = true;
    }
  }

  private request(data: SessionEventOf<'ToolCallRequested'>['data'], at: string, metadata: Record<string, unknown>): void {
    const { tool_call_id: id, message_id, name, args } = data;
    if (this.requested.has(id) || this.stored.ids.has(id)) return;
    // The call was not stored, so a completion of it earlier in the batch found nothing to complete.
    this.completed.delete(id);
    this.lastSeq += 1;
    this.requested.set(id, {
      session_id: this.sessionId,
      id,
      seq: this.lastSeq,
      message_id,
      name,
      args,
      result: null,
      error: null,
      status: 'requested',
      requested_at: at,
      completed_at: null,
      result_original_bytes: null,
      actor: actorOf(metadata),
      client: clientOf(metadata),
    });
  }

  private complete(data: SessionEventOf<'ToolCallCompleted'>['data'], at: string): void {
    const { tool_call_id: id, result, error, result_original_bytes } = data;
    const completion: Completion = {
      session_id: this.sessionId,
      id,
      result: result ?? null,
      error,
      status: error === null ? 'completed' : 'failed',
      completed_at: at,
      result_original_bytes,
    };
    const call = this.requested.get(id);
    if (call !== undefined) Object.assign(call, completion);
    else this.completed.set(id, completion);
  }
}

/** The event's actor (every appender writes one; an unreadable one reads as null rather than failing the batch). */
function actorOf(metadata: Record<string, unknown>): Actor | null {
  const parsed = Actor.safeParse(metadata.actor);
  return parsed.success ? parsed.data : null;
}

function clientOf(metadata: Record<string, unknown>): Client | null {
  const parsed = Client.safeParse(metadata.client);
  return parsed.success ? parsed.data : null;
}

/** One statement: for each session the batch requests calls in, its highest seq and which requested ids it holds. */
async function loadStoredCalls(tx: Queryable, events: readonly TranscriptEvent[]): Promise<Map<string, StoredCalls>> {
  const requested = new Map<string, Set<string>>();
  for (const { sessionId, event } of events) {
    if (event.type !== 'ToolCallRequested') continue;
    const ids = requested.get(sessionId) ?? new Set<string>();
    ids.add(event.data.tool_call_id);
    requested.set(sessionId, ids);
  }
  if (requested.size === 0) return new Map();
  const { rows } = await tx.query<{ session_id: string; max_seq: number | null; stored: string[] }>(
    `SELECT r.session_id,
       (SELECT max(t.seq) FROM tool_calls t WHERE t.session_id = r.session_id) AS max_seq,
       ARRAY(SELECT t.id FROM tool_calls t WHERE t.session_id = r.session_id AND t.id = ANY (r.ids)) AS stored
     FROM jsonb_to_recordset($1::jsonb) AS r(session_id text, ids text[])`,
    [JSON.stringify([...requested].map(([session_id, ids]) => ({ session_id, ids: [...ids] })))],
    PREPARED,
  );
  return new Map(rows.map((row) => [row.session_id, { maxSeq: row.max_seq ?? 0, ids: new Set(row.stored) }]));
}

function fold(events: readonly TranscriptEvent[], stored: ReadonlyMap<string, StoredCalls>): SessionChanges[] {
  const sessions = new Map<string, SessionChanges>();
  for (const event of events) {
    let changes = sessions.get(event.sessionId);
    if (changes === undefined) {
      changes = new SessionChanges(event.sessionId, stored.get(event.sessionId) ?? NO_CALLS);
      sessions.set(event.sessionId, changes);
    }
    changes.apply(event);
  }
  return [...sessions.values()];
}

const MESSAGE_COLUMNS = 'session_id, id, role, text, created_at, event_position';
const TOOL_CALL_COLUMNS = 'session_id, id, seq, message_id, name, args, result, error, status, requested_at, completed_at, result_original_bytes, actor, client';

/**
 * Every write, in one statement. Its parts see the same snapshot and none writes a row another
 * one writes: completions go to calls stored before the batch, inserts to calls that were not, and each
 * message is in one of the two message lists.
 */
function writeChanges(tx: Transaction, sessions: readonly SessionChanges[]): void {
  const completed = sessions.flatMap((s) => [...s.completed.values()]);
  const requested = sessions.flatMap((s) => [...s.requested.values()]);
  const messages = sessions.flatMap((s) => [...s.messages.values()]);
  if (completed.length + requested.length + messages.length === 0) return;
  const messageRows = (setsText: boolean) => messages.filter((m) => m.setsText === setsText).map((m) => m.row);
  tx.send(
    `WITH completed AS (
       UPDATE tool_calls t SET result = c.result, error = c.error, status = c.status, completed_at = c.completed_at,
         result_original_bytes = c.result_original_bytes
       FROM jsonb_populate_recordset(NULL::tool_calls, $1::jsonb) c
       WHERE t.session_id = c.session_id AND t.id = c.id
     ), requested AS (
       INSERT INTO tool_calls (${TOOL_CALL_COLUMNS}) SELECT ${TOOL_CALL_COLUMNS} FROM jsonb_populate_recordset(NULL::tool_calls, $2::jsonb)
     ), created AS (
       INSERT INTO messages (${MESSAGE_COLUMNS}) SELECT ${MESSAGE_COLUMNS} FROM jsonb_populate_recordset(NULL::messages, $3::jsonb)
       ON CONFLICT (session_id, id) DO NOTHING
     )
     INSERT INTO messages (${MESSAGE_COLUMNS}) SELECT ${MESSAGE_COLUMNS} FROM jsonb_populate_recordset(NULL::messages, $4::jsonb)
     ON CONFLICT (session_id, id) DO UPDATE SET text = EXCLUDED.text`,
    [JSON.stringify(completed), JSON.stringify(requested), JSON.stringify(messageRows(false)), JSON.stringify(messageRows(true))],
    PREPARED,
  );
}

async function applyBatch(tx: Transaction, batch: readonly ProjectedEvent[]): Promise<void> {
  const events = sessionEventsIn(batch).map(({ sessionId, event, stored }) => ({ sessionId, event, at: occurredAt(stored), position: stored.position, metadata: stored.metadata }));
  const sessions = fold(events, await loadStoredCalls(tx, events));
  writeChanges(tx, sessions);
}

export const transcriptProjection: Projection = {
  name: 'transcript',
  version: TRANSCRIPT_VERSION,
  tables: ['tool_calls', 'messages'],
  handles: new Set(['UserMessagePosted', 'AssistantMessageRecorded', 'ToolCallRequested', 'ToolCallCompleted']),
  applyBatch,
};

// ---- queries ----

export type ToolCallStatus = 'requested' | 'completed' | 'failed';

export interface MessageToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  result: unknown;
  error: string | null;
  status: ToolCallStatus;
}

export interface MessageView {
  id: string;
  role: 'user' | 'assistant';
  /** text is null for an assistant message that holds only tool calls; a user message has no tool calls. */
  content: { text: string | null; tool_calls: MessageToolCall[] };
  created_at: string;
}

const ToolCallStatusSchema = z.enum(['requested', 'completed', 'failed']);

const MessageRow = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  text: z.string().nullable(),
  created_at: z.date(),
  tool_calls: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      args: z.record(z.string(), z.unknown()),
      result: z.unknown(),
      error: z.string().nullable(),
      status: ToolCallStatusSchema,
    }),
  ),
});

/** The whole transcript in one query: each message carries its turn's tool calls in seq order. */
export async function getMessages(db: Queryable, sessionId: string): Promise<MessageView[]> {
  const { rows } = await db.query(
    `SELECT m.id, m.role, m.text, m.created_at,
       coalesce((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'name', t.name, 'args', t.args, 'result', t.result,
                                                     'error', t.error, 'status', t.status) ORDER BY t.seq)
                 FROM tool_calls t WHERE t.session_id = m.session_id AND t.message_id = m.id), '[]'::jsonb) AS tool_calls
     FROM messages m WHERE m.session_id = $1 ORDER BY m.event_position`,
    [sessionId],
  );
  return rows.map((raw) => {
    const row = MessageRow.parse(raw);
    const tool_calls = row.tool_calls.map(({ id, name, args, result, error, status }) => ({ id, name, args, result: result ?? null, error, status }));
    return { id: row.id, role: row.role, content: { text: row.text, tool_calls }, created_at: row.created_at.toISOString() };
  });
}

export interface ToolCallView extends MessageToolCall {
  message_id: string;
  /** 1-based, in the order the session requested its tool calls. */
  seq: number;
  requested_at: string;
  completed_at: string | null;
  duration_ms: number | null;
  /** Who asked for the call (null for a call recorded before version 2 of this read model was rebuilt). */
  actor: Actor | null;
  /** The external agent it came through: an MCP client's name and version; null for the built-in agent. */
  client: Client | null;
}

const ToolCallRow = z.object({
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  result: z.unknown(),
  error: z.string().nullable(),
  status: ToolCallStatusSchema,
  message_id: z.string(),
  seq: z.number().int(),
  requested_at: z.date(),
  completed_at: z.date().nullable(),
  duration_ms: z.number().int().nullable(),
  actor: Actor.nullable(),
  client: Client.nullable(),
});

/** The session's tool calls flat, in seq order, without the message shell: all, or a page after seq `after`. */
export async function getToolCalls(db: Queryable, sessionId: string, page: { after: number; limit: number } = { after: 0, limit: 2 ** 31 - 1 }): Promise<ToolCallView[]> {
  const { rows } = await db.query(
    `SELECT id, name, args, result, error, status, message_id, seq, requested_at, completed_at,
       round(extract(epoch FROM completed_at - requested_at) * 1000)::bigint AS duration_ms, actor, client
     FROM tool_calls WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [sessionId, page.after, page.limit],
  );
  return rows.map((raw) => {
    const row = ToolCallRow.parse(raw);
    return {
      id: row.id,
      name: row.name,
      args: row.args,
      result: row.result ?? null,
      error: row.error,
      status: row.status,
      message_id: row.message_id,
      seq: row.seq,
      requested_at: row.requested_at.toISOString(),
      completed_at: isoOrNull(row.completed_at),
      duration_ms: row.duration_ms,
      actor: row.actor,
      client: row.client,
    };
  });
}
