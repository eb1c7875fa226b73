// The transcript read model: a session's messages in order, each assistant message with the tool calls of
// its turn, and the flat tool-call list audit scripts read.
//
//   UserMessagePosted         inserts the user message
//   AssistantMessageRecorded  creates the turn's assistant message if absent; sets its text (the last one is the turn's final text)
//   ToolCallRequested         creates the turn's assistant message if absent; inserts the tool call (next seq of the session)
//   ToolCallCompleted         result, error, status (failed when error is set), completed_at
//   SessionDeleted            drops the session's messages and tool calls
import { z } from 'zod';
import type { Queryable } from '../adapters/db/db.ts';
import type { SessionEvent } from '../domain/session/events.ts';
import { eachEvent, type Projection } from './projection.ts';
import { isoOrNull, occurredAt, onSessionEvents, pgJson } from './rows.ts';

const TRANSCRIPT_VERSION = 1;

async function applyEvent(tx: Queryable, sessionId: string, e: SessionEvent, at: string, position: number): Promise<void> {
  switch (e.type) {
    case 'UserMessagePosted':
      await tx.query(
        `INSERT INTO messages (session_id, id, role, text, created_at, event_position) VALUES ($1, $2, 'user', $3, $4, $5)
         ON CONFLICT (session_id, id) DO NOTHING`,
        [sessionId, e.data.message_id, e.data.text, at, position],
      );
      return;
    case 'AssistantMessageRecorded':
      await tx.query(
        `INSERT INTO messages (session_id, id, role, text, created_at, event_position) VALUES ($1, $2, 'assistant', $3, $4, $5)
         ON CONFLICT (session_id, id) DO UPDATE SET text = EXCLUDED.text`,
        [sessionId, e.data.message_id, e.data.text, at, position],
      );
      return;
    case 'ToolCallRequested': {
      // One statement: the turn's message, if this call opens it, and the call (next seq of the session).
      const { tool_call_id, message_id, name, args } = e.data;
      await tx.query(
        `WITH message AS (
           INSERT INTO messages (session_id, id, role, text, created_at, event_position) VALUES ($1, $3, 'assistant', NULL, $6, $7)
           ON CONFLICT (session_id, id) DO NOTHING
         )
         INSERT INTO tool_calls (session_id, id, seq, message_id, name, args, status, requested_at)
         SELECT $1, $2, coalesce(max(seq), 0) + 1, $3, $4, $5::jsonb, 'requested', $6 FROM tool_calls WHERE session_id = $1
         ON CONFLICT (session_id, id) DO NOTHING`,
        [sessionId, tool_call_id, message_id, name, pgJson(args), at, position],
      );
      return;
    }
    case 'ToolCallCompleted': {
      const { tool_call_id, result, error, result_original_bytes } = e.data;
      await tx.query(
        `UPDATE tool_calls SET result = $3::jsonb, error = $4, status = CASE WHEN $4::text IS NULL THEN 'completed' ELSE 'failed' END,
           completed_at = $5, result_original_bytes = $6
         WHERE session_id = $1 AND id = $2`,
        [sessionId, tool_call_id, pgJson(result), error === null ? null : error, at, result_original_bytes],
      );
      return;
    }
    case 'SessionDeleted':
      await tx.query('WITH calls AS (DELETE FROM tool_calls WHERE session_id = $1) DELETE FROM messages WHERE session_id = $1', [sessionId]);
      return;
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
    case 'TurnEnded':
    case 'ExecutionRequested':
    case 'ExecutionRefused':
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionTimedOut':
    case 'AssentOpened':
    case 'AssentClosed':
      return; // not part of the transcript
    default: {
      const unhandled: never = e;
      throw new Error(`transcript projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

export const transcriptProjection: Projection = {
  name: 'transcript',
  version: TRANSCRIPT_VERSION,
  tables: ['tool_calls', 'messages'],
  handles: new Set(['UserMessagePosted', 'AssistantMessageRecorded', 'ToolCallRequested', 'ToolCallCompleted', 'SessionDeleted']),
  applyBatch: eachEvent(onSessionEvents((tx, sessionId, event, stored) => applyEvent(tx, sessionId, event, occurredAt(stored), stored.position))),
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
});

/** The session's tool calls flat, in seq order, without the message shell. */
export async function getToolCalls(db: Queryable, sessionId: string): Promise<ToolCallView[]> {
  const { rows } = await db.query(
    `SELECT id, name, args, result, error, status, message_id, seq, requested_at, completed_at,
       round(extract(epoch FROM completed_at - requested_at) * 1000)::bigint AS duration_ms
     FROM tool_calls WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
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
    };
  });
}
