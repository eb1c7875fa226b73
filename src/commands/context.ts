// What every command handler needs (the event store, the read models for replies, a clock, ids) and what
// each command carries about its cause (who, on whose behalf, because of what).
import type { Queryable } from '../ports/db.ts';
import type { Actor, Client, CommandMetadata } from '../domain/messages.ts';
import type { EventStore } from '../ports/event-store.ts';

export interface CommandDeps {
  readonly store: EventStore;
  /** The read models, for replies that need them (set_goal's recent unfinished sessions). */
  readonly readDb: Queryable;
  readonly clock: () => Date;
  readonly newId: () => string;
}

export interface CommandContext {
  readonly actor: Actor;
  /** The external agent the actor works through (an MCP client), recorded in every event's metadata. */
  readonly client?: Client;
  readonly correlationId?: string;
  /** Id of the request or event that caused the command. */
  readonly causationId?: string;
  /** The server's own agent loop, working for the session's owner (CommandMetadata.actsForOwner). */
  readonly actsForOwner?: true;
}

/** The metadata a decider sees: a fresh command id (also the id of what it creates) and the time now. */
export function commandMetadata(deps: CommandDeps, ctx: CommandContext): CommandMetadata {
  const commandId = deps.newId();
  return {
    commandId,
    actor: ctx.actor,
    ...(ctx.client && { client: ctx.client }),
    ...(ctx.actsForOwner && { actsForOwner: true }),
    correlationId: ctx.correlationId ?? commandId,
    causationId: ctx.causationId ?? commandId,
    now: deps.clock().toISOString(),
  };
}
