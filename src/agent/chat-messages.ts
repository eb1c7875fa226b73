// What a chat client sees of a session: the stored events it cares about, each turned into one message
// stamped with the event's global position (the SSE id a client resumes from). Token deltas are never stored.
import type { StoredEvent } from '../ports/event-store.ts';
import { isSessionEventType, parseSessionEvent } from '../domain/session/events.ts';

export type ChatMessageType = 'user_message' | 'token' | 'tool_use' | 'tool_result' | 'approval_required' | 'text' | 'error' | 'done';

export interface ChatMessage {
  /** Global position of the event the message reflects; null for a token delta, which is not stored. */
  id: number | null;
  type: ChatMessageType;
  session_id: string;
  data: Record<string, unknown>;
}

/** The message a client is sent for a stored event of the session, or null when it is not shown. */
export function toChatMessage(sessionId: string, event: StoredEvent): ChatMessage | null {
  // A type this build does not know (written by a newer one) is not shown rather than breaking the stream.
  if (!isSessionEventType(event.type)) return null;
  const message = (type: ChatMessageType, data: Record<string, unknown>): ChatMessage => ({ id: event.position, type, session_id: sessionId, data });
  const e = parseSessionEvent(event.type, event.data);
  switch (e.type) {
    case 'ToolCallRequested':
      return message('tool_use', { tool_call_id: e.data.tool_call_id, name: e.data.name, args: e.data.args });
    case 'ToolCallCompleted':
      return message('tool_result', { tool_call_id: e.data.tool_call_id, result: e.data.result, error: e.data.error, result_original_bytes: e.data.result_original_bytes });
    case 'ApprovalRequested': {
      const { approval_id, execution_id, command, target, risk_class, expires_at } = e.data;
      return message('approval_required', { approval_id, execution_id, command, target, risk_class, expires_at });
    }
    case 'AssistantMessageRecorded':
      return message('text', { message_id: e.data.message_id, text: e.data.text });
    // A message another client posted (a POST /chat stream starts after its own): a console following the session
    // shows what the agent is answering.
    case 'UserMessagePosted':
      return message('user_message', { message_id: e.data.message_id, text: e.data.text });
    case 'TurnFailed':
      return message('error', { reason: e.data.reason, detail: e.data.detail });
    case 'TurnEnded':
      return message('done', { turn_id: e.data.turn_id, status: e.data.status });
    case 'SessionStarted':
    case 'SessionReopened':
    case 'GoalSet':
    case 'GoalSuperseded':
    case 'PlanProposed':
    case 'PlanStepsReplaced':
    case 'PlanStepUpdated':
    case 'TaskCompleted':
    case 'ExecutionRequested':
    case 'ExecutionRefused':
    case 'ExecutionStarted':
    case 'ExecutionSucceeded':
    case 'ExecutionFailed':
    case 'ExecutionTimedOut':
    case 'ApprovalGranted':
    case 'ApprovalDenied':
    case 'ApprovalExpired':
    case 'ApprovalCancelled':
    case 'AssentOpened':
    case 'AssentClosed':
    case 'SessionHandedOver':
    case 'TurnStarted':
    case 'TurnCancelRequested':
    case 'ModelCallRecorded':
    case 'SessionDeleted':
      return null;
    default: {
      const unhandled: never = e;
      throw new Error(`toChatMessage: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}
