// Deciders for the tool calls an agent records, and the rule that keeps a tool result small enough
// to live in an event.
import { RuleViolation, type CommandMetadata } from '../messages.ts';
import { MAX_TOOL_ARGS_BYTES, type SessionCommand } from './commands.ts';
import { MAX_TOOL_RESULT_BYTES, type SessionEvent, type SessionEventOf } from './events.ts';
import type { SessionState } from './state.ts';

type RecordToolCallRequested = Extract<SessionCommand, { type: 'record_tool_call_requested' }>;
type RecordToolCallCompleted = Extract<SessionCommand, { type: 'record_tool_call_completed' }>;

export function decideToolCallRequested(command: RecordToolCallRequested, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  const { tool_call_id, name, args } = command;
  if (state.toolCalls.has(tool_call_id)) {
    throw new RuleViolation('duplicate_tool_call', `Tool call ${tool_call_id} was already requested in this session; give each tool call its own id.`);
  }
  // Every tool call of a turn hangs off the same assistant message; the first one of the turn creates it.
  const message_id = state.turnMessageId ?? meta.commandId;
  return [{ type: 'ToolCallRequested', data: { tool_call_id, message_id, name, args: boundToolArgs(args) } }];
}

export function decideToolCallCompleted(command: RecordToolCallCompleted, state: SessionState): SessionEvent[] {
  const { tool_call_id } = command;
  const status = state.toolCalls.get(tool_call_id);
  if (status === undefined) {
    throw new RuleViolation('unknown_tool_call', `No tool call ${tool_call_id} was requested in this session; record the request before its result.`);
  }
  if (status === 'completed') {
    throw new RuleViolation(
      'tool_call_already_completed',
      `Tool call ${tool_call_id} already has its result; to run the tool again, request a new tool call with a new id.`,
    );
  }
  return [{ type: 'ToolCallCompleted', data: { tool_call_id, ...boundToolResult(command.result), error: command.error ?? null } }];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Arguments larger than MAX_TOOL_ARGS_BYTES as JSON (a model's, which no schema checked before they are
 * recorded) are kept as the start of that JSON under `truncated`, with the original size: the call is still on
 * record, and one call cannot bloat the stream. The HTTP door refuses such arguments outright.
 */
export function boundToolArgs(args: Record<string, unknown>): Record<string, unknown> {
  const bytes = encoder.encode(JSON.stringify(args));
  if (bytes.length <= MAX_TOOL_ARGS_BYTES) return args;
  let end = MAX_TOOL_ARGS_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { truncated: decoder.decode(bytes.subarray(0, end)), original_bytes: bytes.length };
}

/**
 * A result whose JSON is larger than MAX_TOOL_RESULT_BYTES is kept as the start of that JSON text, with the
 * original size, so one huge command output cannot bloat the stream while the reader still sees that it was cut.
 */
export function boundToolResult(result: unknown): Pick<SessionEventOf<'ToolCallCompleted'>['data'], 'result' | 'result_original_bytes'> {
  const value = result ?? null;
  const bytes = encoder.encode(JSON.stringify(value));
  if (bytes.length <= MAX_TOOL_RESULT_BYTES) return { result: value, result_original_bytes: null };
  let end = MAX_TOOL_RESULT_BYTES;
  // A continuation byte (10xxxxxx) just past the cut means the cut falls inside a character: back up to its start.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { result: decoder.decode(bytes.subarray(0, end)), result_original_bytes: bytes.length };
}
