// The session the context builder is measured on (bench/context.ts): a long investigation as the agent records it,
// in the shapes of test/agent/context-fit.test.ts — `run` calls with ~3 KiB of journal lines each, their
// executions' events, the model calls that asked for them — and the system prompt the agent would send with it.
import { readFile } from 'node:fs/promises';
import { parseSessionEvent, type SessionEvent } from '../src/domain/session/events.ts';
import { sessionStream } from '../src/domain/session/stream.ts';
import { eventMetadata } from '../src/domain/messages.ts';
import type { EventStore } from '../src/ports/event-store.ts';

export const SESSION_ID = 'bench-context';
export const TOOL_CALLS = 150;
export const TURNS = 10;
/** Tool calls a model call asks for at once; a turn ends with one more model call, its answer. */
const CALLS_PER_MODEL_CALL = 3;
const RESULT_BYTES = 3 * 1024;

export const GOAL = 'Find out why the nightly rclone backup of lxc:rclone fails and make it succeed again';
const VERDICT = { risk_class: 'reversible_low' as const, reason: 'read-only', rule: 'journalctl', inner_commands: [] };

const ev = <T extends SessionEvent['type']>(type: T, data: Extract<SessionEvent, { type: T }>['data']) => ({ type, data }) as SessionEvent;

/** The system message as the agent builds it: the shipped prompt, then a fleet snapshot (src/agent/fleet-snapshot.ts). */
export async function systemMessage(): Promise<string> {
  const prompt = await readFile(new URL('../prompts/system.md', import.meta.url), 'utf8');
  const fleet = ['## Fleet snapshot', '4 entities:', '- host:strong', '- lxc:rclone (on host:strong, id 101)', '- vm:zimaos (on host:strong, id 102)', '- lxc:dns (on host:strong, id 103)', 'Approvals waiting for an operator: 0.'];
  return `${prompt}\n\n${fleet.join('\n')}`;
}

/** About `bytes` of journal lines, the same for the same seed. */
function journal(seed: number, bytes: number): string {
  let x = (seed * 2654435761) % 2 ** 32;
  const next = () => (x = (x * 1664525 + 1013904223) % 2 ** 32);
  const lines: string[] = [];
  for (let size = 0; size < bytes; size += (lines.at(-1)?.length ?? 0) + 1) {
    lines.push(`Jan ${1 + (next() % 28)} 03:${String(next() % 60).padStart(2, '0')} rclone rclone[${next() % 30000}]: INFO  : photos/${2019 + (next() % 7)}/IMG_${next() % 10000}.jpg: Copied (new) ${(next() % 900) / 10} MiB/s`);
  }
  return lines.join('\n').slice(0, bytes);
}

function modelCall(turn: number, call: number, finish: string): SessionEvent {
  const context = { budget_tokens: 28_000, estimated_tokens: 20_000, messages: 100, elided_results: 0, folded_turns: 0 };
  return ev('ModelCallRecorded', {
    call_id: `mc-${turn}-${call}`,
    turn_id: `t${turn}`,
    attempt: 1,
    model: 'gpt-4o-2024-08-06',
    provider_host: 'api.openai.com',
    input_tokens: 20_000,
    output_tokens: 120,
    cached_input_tokens: 18_000,
    estimated_input_tokens: 20_000,
    duration_ms: 2_400,
    first_token_ms: 900,
    finish_reason: finish,
    context,
    error: null,
  });
}

/**
 * A long investigation as the agent records it: turns of `run` calls (turnSizes: how many each), each call's
 * execution recorded and its result shaped like run's reply (3 KiB of journal lines); every tenth fails. The goal
 * and plan are set in the first turn; the last turn is still running. With modelCalls, the ModelCallRecorded events
 * of the calls that asked for the runs, CALLS_PER_MODEL_CALL at a time, and of each turn's answer.
 * test/agent/context-fit.test.ts fits the same sessions.
 */
export function investigation(turnSizes: readonly number[], options: { sessionId?: string; modelCalls?: boolean } = {}): SessionEvent[] {
  const sessionId = options.sessionId ?? 's';
  const modelCalls = options.modelCalls === true;
  const events: SessionEvent[] = [ev('SessionStarted', { session_id: sessionId })];
  let n = 0;
  turnSizes.forEach((calls, turn) => {
    events.push(ev('UserMessagePosted', { message_id: `u${turn}`, text: turn === 0 ? 'The nightly backup failed again. Fix it.' : 'Go on.' }));
    events.push(ev('TurnStarted', { turn_id: `t${turn}`, trigger: 'user_message' }));
    if (turn === 0) {
      events.push(ev('ToolCallRequested', { tool_call_id: 'goal', message_id: 'a0', name: 'set_goal', args: { goal: GOAL } }));
      events.push(ev('GoalSet', { goal_id: 'g1', goal: GOAL, title: GOAL }));
      events.push(ev('ToolCallCompleted', { tool_call_id: 'goal', result: { session_id: sessionId, position: 3 }, error: null, result_original_bytes: null }));
      events.push(ev('PlanProposed', { generation: 1, steps: [{ seq: 1, title: 'Read the logs' }, { seq: 2, title: 'Fix the mount' }, { seq: 3, title: 'Run the backup' }] }));
      events.push(ev('PlanStepUpdated', { generation: 1, seq: 1, from: 'pending', status: 'running', closed_by_task: false }));
    }
    for (let c = 0; c < calls; c++, n++) {
      const asking = Math.floor(c / CALLS_PER_MODEL_CALL);
      if (modelCalls && c % CALLS_PER_MODEL_CALL === 0) events.push(modelCall(turn, asking, 'tool_calls'));
      const [id, target, command, stdout] = [`e${n}`, n % 3 === 0 ? 'host:strong' : 'lxc:rclone', `journalctl -u rclone-sync --since -${n + 1}h --no-pager | tail -n 40`, journal(n, RESULT_BYTES)];
      const failed = n % 10 === 9;
      const stderr = failed ? 'permission denied' : '';
      events.push(ev('ToolCallRequested', { tool_call_id: `call-${n}`, message_id: modelCalls ? `a${turn}-${asking}` : `a${turn}`, name: 'run', args: { target, command } }));
      events.push(ev('ExecutionRequested', { execution_id: id, target, command, verdict: VERDICT, rules_version: '1', command_hash: `h${n}`, binding: `b${n}`, known_long: false }));
      events.push(ev('ExecutionStarted', { execution_id: id }));
      events.push(
        failed
          ? ev('ExecutionFailed', { execution_id: id, exit_code: 1, signal: null, error: null, stdout_tail: stdout, stderr_tail: stderr, duration_ms: 40 })
          : ev('ExecutionSucceeded', { execution_id: id, exit_code: 0, stdout_tail: stdout, stderr_tail: stderr, duration_ms: 40 }),
      );
      const result = { execution_id: id, target, verdict: VERDICT, position: events.length, status: failed ? 'failed' : 'succeeded', exit_code: failed ? 1 : 0, stdout, stderr };
      events.push(ev('ToolCallCompleted', { tool_call_id: `call-${n}`, result, error: null, result_original_bytes: null }));
    }
    if (turn < turnSizes.length - 1) {
      if (modelCalls) events.push(modelCall(turn, Math.ceil(calls / CALLS_PER_MODEL_CALL), 'stop'));
      events.push(ev('AssistantMessageRecorded', { message_id: `a${turn}`, text: `Read ${calls} logs, nothing conclusive yet.` }));
      events.push(ev('TurnEnded', { turn_id: `t${turn}`, status: 'completed', model_calls: modelCalls ? Math.ceil(calls / CALLS_PER_MODEL_CALL) + 1 : calls + 1 }));
    }
  });
  return events;
}

/** TOOL_CALLS `run` calls over TURNS turns, with their model calls: the session the bench measures. */
export function contextSession(): SessionEvent[] {
  return investigation(Array<number>(TURNS).fill(TOOL_CALLS / TURNS), { sessionId: SESSION_ID, modelCalls: true });
}

/** Appends the session to `store` a tool call's events at a time, as the agent's commands do (smaller batches). */
export async function appendSession(store: EventStore, events: readonly SessionEvent[]): Promise<void> {
  const metadata = eventMetadata({ commandId: 'bench', actor: { role: 'agent', id: 'nomos' }, correlationId: 'bench', causationId: 'bench', now: new Date().toISOString() });
  let version = -1;
  for (let from = 0; from < events.length; ) {
    // Up to the next ToolCallCompleted, inclusive.
    let to = from;
    while (to < events.length - 1 && events[to]?.type !== 'ToolCallCompleted') to++;
    const batch = events.slice(from, to + 1).map((e) => ({ type: e.type, data: e.data, metadata }));
    const appended = await store.append(sessionStream(SESSION_ID), batch, { expectedVersion: version === -1 ? 'no_stream' : version });
    version = appended.nextExpectedVersion;
    from = to + 1;
  }
}

/** The session read back as the agent reads it before every model call (Agent.events in src/agent/agent.ts). */
export async function readSession(store: EventStore): Promise<SessionEvent[]> {
  const { events } = await store.readStream(sessionStream(SESSION_ID));
  return events.map((e) => parseSessionEvent(e.type, e.data));
}
