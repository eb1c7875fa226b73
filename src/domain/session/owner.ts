// Who may write to a session: operators anywhere, the system's own process managers anywhere, an agent only to a
// session it owns. The server's own agent loop acts for the session's owner. Hand-over moves the ownership.
import { type Actor, type CommandMetadata, Forbidden, RuleViolation, actorName, sameActor } from '../messages.ts';
import type { SessionEvent } from './events.ts';
import type { SessionState } from './state.ts';

/** Whom the command counts as: the owner for the built-in agent loop, the command's actor otherwise. */
export function actingAs(state: SessionState, meta: CommandMetadata): Actor | null {
  return meta.actsForOwner === true ? state.owner : meta.actor;
}

/** Refuses an agent's command to a session another principal owns, naming the owner. */
export function requireWriter(state: SessionState, meta: CommandMetadata): void {
  if (meta.actor.role !== 'agent' || meta.actsForOwner === true || sameActor(state.owner, meta.actor)) return;
  const owner = state.owner === null ? 'an unknown principal' : actorName(state.owner);
  throw new Forbidden(
    'not_session_owner',
    `This session belongs to ${owner}; ${actorName(meta.actor)} may write only to sessions it owns. Work in a session of your own, or ask an operator to hand this one over (POST /sessions/:id/owner).`,
  );
}

export function decideHandOver(to: Actor, state: SessionState, meta: CommandMetadata): SessionEvent[] {
  if (meta.actor.role !== 'operator') throw new Forbidden('forbidden', `Only an operator hands a session over; ${actorName(meta.actor)} may not.`);
  if (state.owner === null) throw new Error('hand_over: a started session has no owner');
  if (sameActor(state.owner, to)) throw new RuleViolation('already_owner', `The session already belongs to ${actorName(to)}.`);
  return [{ type: 'SessionHandedOver', data: { from: state.owner, to } }];
}
