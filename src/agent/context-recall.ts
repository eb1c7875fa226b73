// An earlier tool call of a session as its events recorded it, for get_tool_result: what the fitter
// (./context-fit.ts) elided from the context can be read again.
import { MAX_TOOL_RESULT_BYTES, parseSessionEvent, type SessionEvent } from '../domain/session/events.ts';
import { sessionStream } from '../domain/session/stream.ts';
import type { EventStore } from '../ports/event-store.ts';

export interface RecordedToolCall {
  readonly tool_call_id: string;
  readonly name: string;
  /** Left out (args_elided) when the call would not fit a recorded result with them. */
  readonly args?: Record<string, unknown>;
  readonly args_elided?: true;
  /** requested: no result was recorded (yet). */
  readonly status: 'requested' | 'completed';
  readonly result: unknown;
  readonly error: string | null;
  /** Set when the result was cut to 4 KiB as it was recorded: the size of the original. */
  readonly result_original_bytes: number | null;
}

/** The call with that id in these events; null when the session has none. */
export function findToolCall(events: readonly SessionEvent[], toolCallId: string): RecordedToolCall | null {
  let found: RecordedToolCall | null = null;
  for (const event of events) {
    if (event.type === 'ToolCallRequested' && event.data.tool_call_id === toolCallId && found === null) {
      found = { tool_call_id: toolCallId, name: event.data.name, args: event.data.args, status: 'requested', result: null, error: null, result_original_bytes: null };
    }
    if (event.type === 'ToolCallCompleted' && event.data.tool_call_id === toolCallId && found !== null) {
      const { result, error, result_original_bytes } = event.data;
      return { ...found, status: 'completed', result: result ?? null, error, result_original_bytes };
    }
  }
  return found;
}

/** Reads the session's stream; a call it does not hold is an error the model reads. */
export async function recallToolCall(store: EventStore, sessionId: string, toolCallId: string): Promise<RecordedToolCall> {
  const { events } = await store.readStream(sessionStream(sessionId));
  const toolCalls = events.filter((e) => e.type === 'ToolCallRequested' || e.type === 'ToolCallCompleted');
  const call = findToolCall(toolCalls.map((e) => parseSessionEvent(e.type, e.data)), toolCallId);
  if (call === null) throw new Error(`no tool call ${toolCallId} in this session`);
  return fitted(call);
}

/**
 * The recall is itself recorded as a tool result, cut at MAX_TOOL_RESULT_BYTES: a result that fitted when first
 * recorded loses its arguments (which the call's stub already names) rather than its own end.
 */
function fitted(call: RecordedToolCall): RecordedToolCall {
  if (Buffer.byteLength(JSON.stringify(call)) <= MAX_TOOL_RESULT_BYTES) return call;
  const { args: _args, ...rest } = call;
  return { ...rest, args_elided: true };
}
