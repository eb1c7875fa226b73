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
}

export function buildModelMessages(system: string, events: readonly SessionEvent[]): LlmMessage[] {
  const messages: LlmMessage[] = [{ role: 'system', content: system }];
  const unanswered = new Set<string>();
  const executions = new Map<string, ExecutionNote>();
  const approvals = new Map<string, string>();
  const finishedSinceTurn: string[] = [];

  // A tool call the model made but whose result was never recorded (a crash) still needs an answer.
  const answerDangling = () => {
    for (const id of unanswered) messages.push({ role: 'tool', toolCallId: id, content: JSON.stringify({ error: 'no result was recorded for this call' }) });
    unanswered.clear();
  };

  for (const event of events) {
    switch (event.type) {
      case 'UserMessagePosted':
        answerDangling();
        messages.push({ role: 'user', content: event.data.text });
        break;
      case 'ToolCallRequested':
        messages.push({ role: 'assistant', content: null, toolCalls: [{ id: event.data.tool_call_id, name: event.data.name, arguments: JSON.stringify(event.data.args) }] });
        unanswered.add(event.data.tool_call_id);
        break;
      case 'ToolCallCompleted':
        if (unanswered.delete(event.data.tool_call_id)) {
          messages.push({ role: 'tool', toolCallId: event.data.tool_call_id, content: shownResult(event.data.result, event.data.error, event.data.result_original_bytes) });
        }
        break;
      case 'AssistantMessageRecorded':
        answerDangling();
        messages.push({ role: 'assistant', content: event.data.text });
        break;
      case 'ExecutionRequested':
        executions.set(event.data.execution_id, { target: event.data.target, command: event.data.command, underway: false });
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
        if (note?.underway) finishedSinceTurn.push(`Execution ${event.data.execution_id} (${note.command} on ${note.target}) was refused: ${event.data.reason} — ${event.data.detail}`);
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
        finishedSinceTurn.push(`Execution ${event.data.execution_id} (${note?.command ?? '?'} on ${note?.target ?? '?'}) ${how}.\n${tail}`.trim());
        break;
      }
      case 'TurnStarted':
        answerDangling();
        // A turn the agent starts by itself says why: the executions it was waiting on have ended.
        if (event.data.trigger !== 'user_message') {
          const reason = event.data.trigger === 'continue' ? 'The operator asked you to continue.' : 'An execution you were waiting on has ended or was decided.';
          messages.push({ role: 'user', content: [`[nomos] ${reason}`, ...finishedSinceTurn].join('\n\n') });
        } else if (finishedSinceTurn.length > 0) {
          messages.push({ role: 'user', content: ['[nomos] Meanwhile:', ...finishedSinceTurn].join('\n\n') });
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
  answerDangling();
  return messages;
}
