// The model's context for a turn, rebuilt from the session's events every time: its messages, the tool calls
// it made and what each returned (as it was shown), and what happened to executions it was waiting on.
// Pure: the same events always give the same messages.
import type { SessionEvent } from '../domain/session/events.ts';
import type { LlmMessage } from '../ports/llm.ts';

/** What a tool result looks like to the model: the recorded result as text, with a cut marked as such. */
export function shownResult(result: unknown, error: string | null, originalBytes: number | null): string {
  if (error !== null) return JSON.stringify({ error });
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  return originalBytes === null ? text : `${text}\n[cut: the result was ${originalBytes} bytes; only the first 4096 are shown]`;
}

interface ExecutionNote {
  target: string;
  command: string;
  /** Approved or started: its run answer is no longer the last word, so a refusal now is news. */
  underway: boolean;
  /** The tool call open when it was requested (its run): an end before that call is answered may be in the answer. */
  askedBy: string | null;
}

const ENDED = new Set(['succeeded', 'failed', 'timed_out', 'refused']);

/** Whether a recorded tool result already says how an execution ended: run's answer, or one row of inspect_path's. */
function resultTellsEnd(result: unknown, executionId: string): boolean {
  if (typeof result === 'string') {
    // Cut when it was recorded: the start of the JSON text, where both put the execution's id before its status.
    const at = result.indexOf(`"execution_id":${JSON.stringify(executionId)}`);
    const status = at < 0 ? undefined : /"status":"([a-z_]+)"/.exec(result.slice(at))?.[1];
    return status !== undefined && ENDED.has(status);
  }
  if (typeof result !== 'object' || result === null) return false;
  const reply = result as { execution_id?: unknown; status?: unknown; rows?: unknown };
  const replies: unknown[] = [reply, ...(Array.isArray(reply.rows) ? (reply.rows as unknown[]) : [])];
  return replies.some((r) => {
    const row = r as { execution_id?: unknown; status?: unknown } | null;
    return typeof row === 'object' && row !== null && row.execution_id === executionId && typeof row.status === 'string' && ENDED.has(row.status);
  });
}

/** A message of the context with the index of the event that put it there (the system message: -1; answers to calls left dangling at the end: events.length). */
export interface SourcedMessage {
  readonly message: LlmMessage;
  readonly event: number;
}

export function buildModelMessages(system: string, events: readonly SessionEvent[]): LlmMessage[] {
  return buildSourcedMessages(system, events).map((m) => m.message);
}

/** buildModelMessages, each message with where it came from: the fitter (./context-fit.ts) cuts the session at such points. */
export function buildSourcedMessages(system: string, events: readonly SessionEvent[]): SourcedMessage[] {
  const messages: SourcedMessage[] = [{ message: { role: 'system', content: system }, event: -1 }];
  let at = -1;
  const push = (message: LlmMessage) => messages.push({ message, event: at });
  const unanswered = new Set<string>();
  const executions = new Map<string, ExecutionNote>();
  const approvals = new Map<string, string>();
  const finishedSinceTurn: string[] = [];
  // News of an execution that ended while the call that asked for it was open waits for that call's answer,
  // which usually tells the end itself (a run that finished within its wait): told once, not twice.
  const heldForCall = new Map<string, { executionId: string; news: string }[]>();
  let lastCall: string | null = null;
  const tell = (note: ExecutionNote | undefined, executionId: string, news: string) => {
    const call = note?.askedBy;
    if (call == null || !unanswered.has(call)) finishedSinceTurn.push(news);
    else heldForCall.set(call, [...(heldForCall.get(call) ?? []), { executionId, news }]);
  };
  const release = (callId: string, result: unknown) => {
    for (const { executionId, news } of heldForCall.get(callId) ?? []) if (!resultTellsEnd(result, executionId)) finishedSinceTurn.push(news);
    heldForCall.delete(callId);
  };

  // A tool call the model made but whose result was never recorded (a crash) still needs an answer.
  const answerDangling = () => {
    for (const id of unanswered) {
      push({ role: 'tool', toolCallId: id, content: JSON.stringify({ error: 'no result was recorded for this call' }) });
      release(id, null);
    }
    unanswered.clear();
  };

  for (const event of events) {
    at++;
    switch (event.type) {
      case 'UserMessagePosted':
        answerDangling();
        push({ role: 'user', content: event.data.text });
        break;
      case 'ToolCallRequested':
        push({ role: 'assistant', content: null, toolCalls: [{ id: event.data.tool_call_id, name: event.data.name, arguments: JSON.stringify(event.data.args) }] });
        unanswered.add(event.data.tool_call_id);
        lastCall = event.data.tool_call_id;
        break;
      case 'ToolCallCompleted':
        if (unanswered.delete(event.data.tool_call_id)) {
          push({ role: 'tool', toolCallId: event.data.tool_call_id, content: shownResult(event.data.result, event.data.error, event.data.result_original_bytes) });
          release(event.data.tool_call_id, event.data.result);
        }
        break;
      case 'AssistantMessageRecorded':
        answerDangling();
        push({ role: 'assistant', content: event.data.text });
        break;
      case 'ExecutionRequested':
        executions.set(event.data.execution_id, { target: event.data.target, command: event.data.command, underway: false, askedBy: lastCall !== null && unanswered.has(lastCall) ? lastCall : null });
        break;
      case 'ApprovalRequested':
        approvals.set(event.data.approval_id, event.data.execution_id);
        break;
      case 'ApprovalGranted':
      case 'ExecutionStarted': {
        const executionId = event.type === 'ExecutionStarted' ? event.data.execution_id : approvals.get(event.data.approval_id);
        const note = executionId === undefined ? undefined : executions.get(executionId);
        if (note) note.underway = true;
        break;
      }
      case 'ExecutionRefused': {
        // Refused when asked, the run's own answer said so; refused once approved or started (the target
        // could not be reached, the server was lost) only this tells the agent.
        const note = executions.get(event.data.execution_id);
        if (note?.underway) tell(note, event.data.execution_id, `Execution ${event.data.execution_id} (${note.command} on ${note.target}) was refused: ${event.data.reason} — ${event.data.detail}`);
        break;
      }
      case 'ExecutionSucceeded':
      case 'ExecutionFailed':
      case 'ExecutionTimedOut': {
        const note = executions.get(event.data.execution_id);
        const how =
          event.type === 'ExecutionSucceeded'
            ? 'succeeded'
            : event.type === 'ExecutionFailed'
              ? `failed (exit ${String(event.data.exit_code)}${event.data.signal ? `, signal ${event.data.signal}` : ''}${event.data.error ? `: ${event.data.error}` : ''})`
              : 'was killed at the hard limit';
        const tail = event.data.stdout_tail.slice(-1500) + (event.data.stderr_tail ? `\nstderr: ${event.data.stderr_tail.slice(-500)}` : '');
        tell(note, event.data.execution_id, `Execution ${event.data.execution_id} (${note?.command ?? '?'} on ${note?.target ?? '?'}) ${how}.\n${tail}`.trim());
        break;
      }
      case 'TurnStarted':
        answerDangling();
        // A turn the agent starts by itself says why: the executions it was waiting on have ended.
        if (event.data.trigger !== 'user_message') {
          const reason = event.data.trigger === 'continue' ? 'The operator asked you to continue.' : 'An execution you were waiting on has ended or was decided.';
          push({ role: 'user', content: [`[nomos] ${reason}`, ...finishedSinceTurn].join('\n\n') });
        } else if (finishedSinceTurn.length > 0) {
          push({ role: 'user', content: ['[nomos] Meanwhile:', ...finishedSinceTurn].join('\n\n') });
        }
        finishedSinceTurn.length = 0;
        break;
      case 'ApprovalDenied':
        // Told at the next turn, never between a tool call and its result.
        finishedSinceTurn.push(`The operator denied approval ${event.data.approval_id}: ${event.data.reason}`);
        break;
      default:
        break; // other facts are in the tool results already
    }
  }
  at = events.length;
  answerDangling();
  return messages;
}
