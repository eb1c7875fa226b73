// What happened in the part of a session the fitter (./context-fit.ts) folds away, one line per fact, taken from
// the events and never from the model's own words: what the user asked, goals, plans, commands with their
// approvals and outcomes, tasks completed.
import type { SessionEvent } from '../domain/session/events.ts';

interface ExecutionLine {
  readonly target: string;
  readonly command: string;
  readonly toolCallId: string | null;
  readonly outcome: string[];
}

/** The digest of events[0, end), oldest first. */
export function digestLines(events: readonly SessionEvent[], end: number): string[] {
  const lines: (string | ExecutionLine)[] = [];
  const executions = new Map<string, ExecutionLine>();
  const approvals = new Map<string, ExecutionLine>();
  // The run call an execution belongs to: requested just before it, not yet answered.
  let openRun: string | null = null;
  const note = (execution: ExecutionLine | undefined, what: string) => execution?.outcome.push(what);

  for (const event of events.slice(0, end)) {
    switch (event.type) {
      case 'UserMessagePosted':
        lines.push(`- user: ${clip(event.data.text, 240)}`);
        break;
      case 'GoalSet':
        lines.push(`- goal set: ${clip(event.data.goal, 240)}`);
        break;
      case 'PlanProposed':
        lines.push(`- plan proposed (generation ${event.data.generation}): ${event.data.steps.length} steps`);
        break;
      case 'TaskCompleted':
        lines.push(`- task completed (${event.data.outcome}): ${clip(event.data.summary, 240)}`);
        break;
      case 'ToolCallRequested':
        openRun = event.data.name === 'run' ? event.data.tool_call_id : null;
        break;
      case 'ToolCallCompleted':
        if (event.data.tool_call_id === openRun) openRun = null;
        break;
      case 'ExecutionRequested': {
        const execution: ExecutionLine = { target: event.data.target, command: event.data.command, toolCallId: openRun, outcome: [] };
        executions.set(event.data.execution_id, execution);
        lines.push(execution);
        break;
      }
      case 'ApprovalRequested': {
        const execution = executions.get(event.data.execution_id);
        if (execution) approvals.set(event.data.approval_id, execution);
        note(execution, `approval asked (${event.data.risk_class})`);
        break;
      }
      case 'ApprovalGranted':
        note(approvals.get(event.data.approval_id), 'approved');
        break;
      case 'ApprovalDenied':
        note(approvals.get(event.data.approval_id), `denied: ${clip(event.data.reason, 120)}`);
        break;
      case 'ApprovalExpired':
        note(approvals.get(event.data.approval_id), 'approval expired');
        break;
      case 'ApprovalCancelled':
        note(approvals.get(event.data.approval_id), `approval cancelled: ${clip(event.data.reason, 120)}`);
        break;
      case 'ExecutionRefused':
        note(executions.get(event.data.execution_id), `refused (${event.data.reason}: ${clip(event.data.detail, 120)})`);
        break;
      case 'ExecutionSucceeded':
        note(executions.get(event.data.execution_id), 'succeeded (exit 0)');
        break;
      case 'ExecutionFailed': {
        const { exit_code, signal, error } = event.data;
        note(executions.get(event.data.execution_id), `failed (exit ${String(exit_code)}${signal ? `, signal ${signal}` : ''}${error ? `: ${clip(error, 120)}` : ''})`);
        break;
      }
      case 'ExecutionTimedOut':
        note(executions.get(event.data.execution_id), 'timed out (killed at the hard limit)');
        break;
      default:
        break; // the model's own words, and facts no later step depends on
    }
  }
  return lines.map((line) => (typeof line === 'string' ? line : executionLine(line)));
}

function executionLine({ target, command, toolCallId, outcome }: ExecutionLine): string {
  const call = toolCallId === null ? '' : ` [tool_call_id "${toolCallId}"]`;
  return `- run on ${target}: ${clip(command, 160)} → ${outcome.length > 0 ? outcome.join('; ') : 'no outcome yet'}${call}`;
}

/** One line of at most `max` characters. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
