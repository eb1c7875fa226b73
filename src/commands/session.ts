// The session's commands as the API and the agent call them: build metadata, run the decider through
// handleCommand, and shape the reply (set_goal also looks up recent unfinished sessions in the read model).
import { Actor } from '../domain/messages.ts';
import type { EventStore } from '../ports/event-store.ts';
import type { SessionCommand } from '../domain/session/commands.ts';
import { decide, type SessionCommandInput } from '../domain/session/decide.ts';
import { SESSION_EVENT_VERSION, type SessionEvent, parseSessionEvent } from '../domain/session/events.ts';
import { type SessionState, evolve, initialSessionState } from '../domain/session/state.ts';
import { sessionStream } from '../domain/session/stream.ts';
import { recentUnfinishedSessions } from '../projections/sessions.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from './context.ts';
import { type Decider, type Handled, handleCommand } from './handle.ts';
import { KeyedLock } from './keyed-lock.ts';


/**
 * Every session command is decided on fresh state, so a version conflict (a writer in another process)
 * is always safe to retry.
 */
const RETRIES = 10;
const RECENT_UNFINISHED_WINDOW_MS = 24 * 3600_000;

export const sessionDecider: Decider<SessionState, SessionEvent, SessionCommandInput> = {
  initialState: initialSessionState,
  evolve,
  decide,
  parse: (stored) => withOwner(parseSessionEvent(stored.type, stored.data), stored.metadata),
  schemaVersion: SESSION_EVENT_VERSION,
};

/** A session started before owners were recorded belongs to the actor of its first event, as its metadata says. */
function withOwner(event: SessionEvent, metadata: Record<string, unknown>): SessionEvent {
  if (event.type !== 'SessionStarted' || event.data.owner !== undefined) return event;
  const actor = Actor.safeParse(metadata.actor);
  return actor.success ? { type: 'SessionStarted', data: { ...event.data, owner: actor.data } } : event;
}

/** The session as its events leave it (its owner, its status), for a check before a command that is not the session's own. */
export async function loadSession(store: EventStore, sessionId: string): Promise<SessionState> {
  const { events } = await store.readStream(sessionStream(sessionId));
  return events.map((e) => sessionDecider.parse(e)).reduce(evolve, initialSessionState);
}

export interface CommandReply {
  session_id: string;
  /** Global position of the last event appended: pass it as min_position to read your own write. */
  position: number;
  events: string[];
  [key: string]: unknown;
}


const streams = new KeyedLock();

/** Decides one command on a session's stream and appends what it decided; for the command layer's own use. */
export async function runSessionCommand(
  deps: CommandDeps,
  sessionId: string,
  command: SessionCommandInput,
  ctx: CommandContext,
): Promise<Handled<SessionState, SessionEvent>> {
  const stream = sessionStream(sessionId);
  return streams.run(stream, () => handleCommand(deps.store, stream, sessionDecider, command, commandMetadata(deps, ctx), { retries: RETRIES }));
}

const run = runSessionCommand;

function base(sessionId: string, handled: Handled<SessionState, SessionEvent>): CommandReply {
  return { session_id: sessionId, position: handled.position, events: handled.events.map((e) => e.type) };
}

export async function startSession(deps: CommandDeps, ctx: CommandContext): Promise<CommandReply> {
  const sessionId = deps.newId();
  const handled = await run(deps, sessionId, { type: 'start_session', session_id: sessionId }, ctx);
  return base(sessionId, handled);
}

export async function deleteSession(deps: CommandDeps, sessionId: string, reason: string | null, ctx: CommandContext): Promise<CommandReply> {
  return base(sessionId, await run(deps, sessionId, { type: 'delete_session', reason }, ctx));
}

export async function handOverSession(deps: CommandDeps, sessionId: string, to: Actor, ctx: CommandContext): Promise<CommandReply & { owner: Actor }> {
  return { ...base(sessionId, await run(deps, sessionId, { type: 'hand_over', to }, ctx)), owner: to };
}

export async function executeSessionCommand(deps: CommandDeps, sessionId: string, command: SessionCommand, ctx: CommandContext): Promise<CommandReply> {
  const handled = await run(deps, sessionId, command, ctx);
  const reply = base(sessionId, handled);
  return { ...reply, ...(await details(deps, sessionId, command, handled)) };
}

/** The command-specific part of a reply, read off the events the command produced. */
async function details(deps: CommandDeps, sessionId: string, command: SessionCommand, handled: Handled<SessionState, SessionEvent>): Promise<Record<string, unknown>> {
  const find = <K extends SessionEvent['type']>(type: K) => handled.events.find((e): e is Extract<SessionEvent, { type: K }> => e.type === type);
  switch (command.type) {
    case 'post_user_message':
      return { message_id: find('UserMessagePosted')?.data.message_id };
    case 'record_assistant_message':
      return { message_id: find('AssistantMessageRecorded')?.data.message_id };
    case 'record_tool_call_requested':
      return { tool_call_id: command.tool_call_id, message_id: find('ToolCallRequested')?.data.message_id };
    case 'record_tool_call_completed': {
      const completed = find('ToolCallCompleted');
      return { tool_call_id: command.tool_call_id, result_truncated: completed?.data.result_original_bytes != null, result_original_bytes: completed?.data.result_original_bytes ?? null };
    }
    case 'set_goal': {
      const set = find('GoalSet');
      const since = new Date(deps.clock().getTime() - RECENT_UNFINISHED_WINDOW_MS);
      const recent = await recentUnfinishedSessions(deps.readDb, { excludeSessionId: sessionId, since, limit: 5 });
      return {
        goal_id: set?.data.goal_id,
        title: set?.data.title,
        superseded_goal_id: find('GoalSuperseded')?.data.goal_id ?? null,
        recent_unfinished_sessions: recent,
        ...(recent.length > 0 && {
          hint: 'Other sessions ended partial or failed in the last 24 h: read their summary and blocker (GET /sessions/:id) before planning, and pick up the thread.',
        }),
      };
    }
    case 'propose_plan': {
      const proposed = find('PlanProposed');
      const replaced = find('PlanStepsReplaced');
      return { generation: proposed?.data.generation, steps: proposed?.data.steps ?? [], replaced_steps: replaced?.data.steps ?? [] };
    }
    case 'update_plan_step': {
      const updated = find('PlanStepUpdated');
      return { generation: updated?.data.generation, seq: command.seq, status: command.status, from: updated?.data.from };
    }
    case 'complete_task': {
      const completed = find('TaskCompleted');
      return {
        outcome: command.outcome,
        status: completed?.data.status,
        goal_id: completed?.data.goal_id ?? null,
        closed_steps: handled.events.flatMap((e) => (e.type === 'PlanStepUpdated' ? [{ generation: e.data.generation, seq: e.data.seq, status: e.data.status }] : [])),
        cancelled_approvals: handled.events.flatMap((e) => (e.type === 'ApprovalCancelled' ? [e.data.approval_id] : [])),
      };
    }
  }
}
