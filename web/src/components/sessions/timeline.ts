// A session as one timeline in the order of its event log: messages, tool calls, and each command's request,
// approval, start and end at the place each happened. The events' positions order everything; the read models'
// rows add what the events do not hold (a tool call's recorded result, an execution's and approval's state now).
// A step that follows straight on the one before it for the same execution joins it; one that came later (an
// operator approving after the agent had moved on) stands where it happened, as its own entry.
import type { StoredEventView } from '../../lib/types.ts';
import type { ToolCallView } from './session-types.ts';
import { causedBy } from './caused.ts';

export type StepKind =
  | 'requested' | 'approval_requested' | 'granted' | 'denied' | 'expired' | 'cancelled'
  | 'started' | 'succeeded' | 'failed' | 'timed_out' | 'refused';

/** One moment of an execution, as its event recorded it. */
export interface Step {
  kind: StepKind;
  position: number;
  at: string;
  actor: StoredEventView['metadata']['actor'];
  data: Record<string, unknown>;
}

export type Entry =
  | { kind: 'message'; key: string; position: number; role: 'user' | 'assistant'; text: string; at: string }
  /** Tool calls in a row of one turn that caused no command: one group that opens and closes. */
  | { kind: 'calls'; key: string; position: number; messageId: string; calls: ToolCallView[] }
  /** first: the entry holding its request (the execution's anchor); later ones continue it where they happened. */
  | { kind: 'execution'; key: string; position: number; executionId: string; first: boolean; call: ToolCallView | null; steps: Step[] }
  /** A goal, plan or task end written directly, not by a tool call (which shows its own). */
  | { kind: 'record'; key: string; position: number; event: StoredEventView };

export interface Timeline {
  entries: Entry[];
  /** The events each tool call wrote while it was open (GoalSet, PlanProposed, PlanStepUpdated, TaskCompleted…). */
  wrote: Map<string, StoredEventView[]>;
  /** Which tool call asked for each execution. */
  callOf: Map<string, string>;
}

const STEP: Record<string, StepKind> = {
  ExecutionRequested: 'requested',
  ApprovalRequested: 'approval_requested',
  ApprovalGranted: 'granted',
  ApprovalDenied: 'denied',
  ApprovalExpired: 'expired',
  ApprovalCancelled: 'cancelled',
  ExecutionStarted: 'started',
  ExecutionSucceeded: 'succeeded',
  ExecutionFailed: 'failed',
  ExecutionTimedOut: 'timed_out',
  ExecutionRefused: 'refused',
};
const RECORDS = new Set(['GoalSet', 'PlanProposed', 'TaskCompleted']);

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Builds the timeline from the session's events (in position order) and its tool calls as the read model holds them. */
export function buildTimeline(events: readonly StoredEventView[], calls: readonly ToolCallView[]): Timeline {
  const byId = new Map(calls.map((c) => [c.id, c]));
  const callOf = new Map<string, string>();
  for (const c of calls) for (const e of causedBy(c.result).executions) if (!callOf.has(e)) callOf.set(e, c.id);
  // A call that caused a command is shown with the first command it caused, not in a group.
  const heldBy = new Map<string, ToolCallView>();
  for (const c of calls) {
    const first = causedBy(c.result).executions[0];
    if (first !== undefined && !heldBy.has(first)) heldBy.set(first, c);
  }
  const held = new Set([...heldBy.values()].map((c) => c.id));
  const approvalExec = new Map<string, string>();
  const open = new Map<string, string>();
  const wrote = new Map<string, StoredEventView[]>();
  const entries: Entry[] = [];

  for (const e of [...events].sort((a, b) => a.position - b.position)) {
    const d = e.data;
    const last = entries.at(-1);
    if (e.type === 'UserMessagePosted' || e.type === 'AssistantMessageRecorded') {
      entries.push({ kind: 'message', key: `m${e.position}`, position: e.position, role: e.type === 'UserMessagePosted' ? 'user' : 'assistant', text: text(d.text) ?? '', at: e.recorded_at });
    } else if (e.type === 'ToolCallRequested') {
      const id = text(d.tool_call_id) ?? '';
      open.set(id, text(d.name) ?? '');
      const call = byId.get(id);
      if (!call || held.has(id)) continue;
      if (last?.kind === 'calls' && last.messageId === call.message_id) last.calls.push(call);
      else entries.push({ kind: 'calls', key: `c${e.position}`, position: e.position, messageId: call.message_id, calls: [call] });
    } else if (e.type === 'ToolCallCompleted') {
      open.delete(text(d.tool_call_id) ?? '');
    } else if (e.type in STEP) {
      if (e.type === 'ApprovalRequested') approvalExec.set(text(d.approval_id) ?? '', text(d.execution_id) ?? '');
      const executionId = text(d.execution_id) ?? approvalExec.get(text(d.approval_id) ?? '') ?? '';
      const step: Step = { kind: STEP[e.type]!, position: e.position, at: e.recorded_at, actor: e.metadata.actor, data: d };
      if (step.kind === 'requested') {
        entries.push({ kind: 'execution', key: `x${e.position}`, position: e.position, executionId, first: true, call: heldBy.get(executionId) ?? null, steps: [step] });
      } else if (last?.kind === 'execution' && last.executionId === executionId) last.steps.push(step);
      else entries.push({ kind: 'execution', key: `x${e.position}`, position: e.position, executionId, first: false, call: null, steps: [step] });
    } else {
      // What an open call wrote is shown with that call; the same written directly stands on its own.
      const writer = [...open.keys()].at(-1);
      if (writer !== undefined) wrote.set(writer, [...(wrote.get(writer) ?? []), e]);
      else if (RECORDS.has(e.type)) entries.push({ kind: 'record', key: `r${e.position}`, position: e.position, event: e });
    }
  }
  return { entries, wrote, callOf };
}

/** What the header counts, all read off the same lists the timeline shows, so they cannot disagree with it. */
export interface Counts {
  toolCalls: number;
  byName: Array<[string, number]>;
  executions: number;
  /** Executions a tool call asked for; the rest were sent directly (the API's run or inspect_path command). */
  fromToolCalls: number;
  failed: number;
  /** Calls of a tool that runs commands (run, inspect_path) whose result names no execution of this session. */
  runCallsWithoutExecution: number;
}

const RUNNING_TOOLS = new Set(['run', 'inspect_path']);

export function countsOf(calls: readonly ToolCallView[], executions: ReadonlyArray<{ id: string; status: string }>, callOf: ReadonlyMap<string, string>): Counts {
  const names = new Map<string, number>();
  for (const c of calls) names.set(c.name, (names.get(c.name) ?? 0) + 1);
  const known = new Set(executions.map((x) => x.id));
  return {
    toolCalls: calls.length,
    byName: [...names.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    executions: executions.length,
    fromToolCalls: executions.filter((x) => callOf.has(x.id)).length,
    failed: executions.filter((x) => ['failed', 'timed_out', 'refused'].includes(x.status)).length,
    runCallsWithoutExecution: calls.filter((c) => RUNNING_TOOLS.has(c.name) && !causedBy(c.result).executions.some((e) => known.has(e))).length,
  };
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * Why the number of tool calls (and of `run` calls among them) need not match the number of executions, in words:
 * a command can be sent straight through the API (the `run` and `inspect_path` commands of POST
 * /sessions/:id/commands, as the README's tour and scripts do) without any tool call, one inspect_path call runs
 * on several targets, and a client may record a `run` call whose result it wrote itself. Empty when they match.
 */
export function countWords(c: Counts): string[] {
  const words: string[] = [];
  const direct = c.executions - c.fromToolCalls;
  if (c.executions > 0) {
    words.push(direct === 0
      ? `All ${plural(c.executions, 'execution')} were asked for by tool calls.`
      : c.fromToolCalls === 0
        ? `${c.executions === 1 ? 'The execution was' : `All ${c.executions} executions were`} sent straight to the API (its run or inspect_path command), not by a tool call.`
        : `${plural(c.fromToolCalls, 'execution')} asked for by tool calls; ${plural(direct, 'execution')} sent straight to the API (its run or inspect_path command), not by a tool call.`);
  }
  if (c.runCallsWithoutExecution > 0) {
    words.push(`${plural(c.runCallsWithoutExecution, 'run or inspect_path call')} started no execution here: ${c.runCallsWithoutExecution === 1 ? 'its result was' : 'their results were'} recorded by the client, or the command was refused before it was recorded.`);
  }
  return words;
}

/** "as of position 54" in words: which part of the event log the page reflects, and whether that is all of it. */
export function freshnessWords(asOf: number, head: number | null): string {
  if (head === null || head <= asOf) return `Up to date: shows everything recorded up to event #${asOf}, the latest in the log`;
  return `Shows what was recorded up to event #${asOf}; the log has reached event #${head}, catching up…`;
}

/** What the numbers of freshnessWords are, for a tooltip. */
export const FRESHNESS_HELP = 'Every change Nomos records is an event in one log, numbered in order across all sessions; this page reflects the log up to the event named.';
