// Nomos closes a task nobody finished, as `partial` through the session's own complete_task, by a system actor
// (so the blocker rules name it user_abandoned). Decided on the stream as it stands and appended with the version
// it was decided on: a session that moved meanwhile (a message, a run) is left open, never closed under it.
import { eventMetadata } from '../domain/messages.ts';
import { ABANDONED_BY, type AbandonReason, abandonSummary, keptOpenBy } from '../domain/session/abandon.ts';
import { sessionStream } from '../domain/session/stream.ts';
import { ConcurrencyError } from '../ports/event-store.ts';
import { type CommandDeps, commandMetadata } from './context.ts';
import { sessionDecider } from './session.ts';

export type CloseResult = { closed: true; position: number } | { closed: false; why: string };

/**
 * Closes the session as abandoned. `idleMs`: for the idle close, the session is closed only when its last event is
 * at least that old by the clock; for an ended MCP session, 0.
 */
export async function closeAbandoned(deps: CommandDeps, sessionId: string, options: { reason: AbandonReason; idleMs: number }): Promise<CloseResult> {
  const stream = sessionStream(sessionId);
  const { version, events } = await deps.store.readStream(stream);
  const state = events.map((e) => sessionDecider.parse(e)).reduce((current, event) => sessionDecider.evolve(current, event), sessionDecider.initialState);
  const why = keptOpenBy(state);
  if (why !== null) return { closed: false, why };
  const last = events.at(-1)?.metadata.occurred_at;
  const now = deps.clock();
  if (options.idleMs > 0 && (typeof last !== 'string' || now.getTime() - Date.parse(last) < options.idleMs)) return { closed: false, why: 'active meanwhile' };
  const meta = commandMetadata(deps, { actor: ABANDONED_BY });
  const decided = sessionDecider.decide({ type: 'complete_task', outcome: 'partial', summary: abandonSummary(options.reason, options.idleMs) }, state, meta);
  const metadata = eventMetadata(meta, sessionDecider.schemaVersion);
  try {
    const appended = await deps.store.append(stream, decided.map((e) => ({ type: e.type, data: e.data, metadata })), { expectedVersion: version });
    return { closed: true, position: appended.position };
  } catch (error) {
    if (error instanceof ConcurrencyError) return { closed: false, why: 'active meanwhile' };
    throw error;
  }
}
