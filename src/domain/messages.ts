// Conventions shared by every aggregate: who acted, why, when — carried in each event's metadata.
import { z } from 'zod';

export const Role = z.enum(['operator', 'agent', 'system']);
export type Role = z.infer<typeof Role>;

export const Actor = z.strictObject({ role: Role, id: z.string().min(1).max(200) });
export type Actor = z.infer<typeof Actor>;

/**
 * The program an actor worked through, when it named itself: an MCP client's name and version from its
 * handshake (Claude Code, Codex, …). Self-declared, so it says how, never who: the actor is the authenticated part.
 */
export const Client = z.strictObject({ name: z.string().min(1).max(200), version: z.string().max(100) });
export type Client = z.infer<typeof Client>;

/** Metadata of a command: supplied by the caller (API, agent, CLI), never invented by a decider. */
export interface CommandMetadata {
  /** Unique id of this command; deciders use it as the id of anything the command creates. */
  readonly commandId: string;
  readonly actor: Actor;
  /** Set when the actor worked through an external agent (an MCP client). */
  readonly client?: Client;
  /**
   * Set by the server's own agent loop, which works for whoever owns the session (its owner's message started the
   * turn): it writes as the owner may, and runs under an assent window granted to the owner. Never from a request.
   */
  readonly actsForOwner?: true;
  readonly correlationId: string;
  /** Id of the event or request that caused this command. */
  readonly causationId: string;
  /** ISO 8601 time the command is handled at. */
  readonly now: string;
}

export const EventMetadata = z.object({
  schema_version: z.number().int().positive(),
  actor: Actor,
  client: Client.optional(),
  correlation_id: z.string().min(1),
  causation_id: z.string().min(1),
  occurred_at: z.iso.datetime({ offset: true }),
});
export type EventMetadata = z.infer<typeof EventMetadata>;

export function eventMetadata(meta: CommandMetadata, schemaVersion = 1): EventMetadata {
  return {
    schema_version: schemaVersion,
    actor: meta.actor,
    ...(meta.client && { client: meta.client }),
    correlation_id: meta.correlationId,
    causation_id: meta.causationId,
    occurred_at: meta.now,
  };
}

/** A decided event before it is stored. */
export interface Decided<E extends { type: string; data: unknown }> {
  readonly event: E;
  readonly metadata: EventMetadata;
}

/** A domain rule refused the command. `rule` is a stable code; the message says what to do instead. */
export class RuleViolation extends Error {
  constructor(
    readonly rule: string,
    message: string,
  ) {
    super(message);
    this.name = 'RuleViolation';
  }
}

/** The actor may not do this to this aggregate (an agent writing to a session another principal owns). */
export class Forbidden extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'Forbidden';
  }
}

/** `role:id`, as actors are named in messages and in the API. */
export const actorName = (actor: Actor): string => `${actor.role}:${actor.id}`;

export const sameActor = (a: Actor | null, b: Actor | null): boolean => a !== null && b !== null && a.role === b.role && a.id === b.id;

/** The command names something that does not exist (a session, a stream). */
export class NotFound extends Error {
  constructor(
    readonly what: string,
    message: string,
    readonly code = 'not_found',
  ) {
    super(message);
    this.name = 'NotFound';
  }
}
