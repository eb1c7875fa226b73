// The fleet inventory's commands as the API and the execution layer call them: register a payload of
// entities (all checked before any is appended, hosts before their guests), pin a host key seen at first
// connection, change an entity's state; and read an entity, or the SSH target a command on it runs through.
import type { z } from 'zod';
import { NotFound, RuleViolation } from '../domain/messages.ts';
import { AttributesUpdate, type EntityCommand, type EntitySpecInput, Inventory, RelationshipSpec, RetirementReason } from '../domain/entity/commands.ts';
import { checkParents, decide, registrationOrder } from '../domain/entity/decide.ts';
import {
  ENTITY_EVENT_VERSION,
  type EntityEvent,
  type EntityLifecycle,
  EntitySlug,
  EntityType,
  hostKeyProblem,
  parseEntityEvent,
} from '../domain/entity/events.ts';
import { type Entity, type EntityState, evolve, initialEntityState } from '../domain/entity/state.ts';
import { entityStream } from '../domain/entity/stream.ts';
import type { EventStore } from '../ports/event-store.ts';
import type { ExecTarget, SshHost } from '../ports/executor.ts';
import { type Decider, type Handled, handleCommand } from './handle.ts';
import { KeyedLock } from './keyed-lock.ts';
import { type CommandContext, type CommandDeps, commandMetadata } from './context.ts';

/** Every entity command is decided on fresh state, so a version conflict is always safe to retry. */
const RETRIES = 10;

export const entityDecider: Decider<EntityState, EntityEvent, EntityCommand> = {
  initialState: initialEntityState,
  evolve,
  decide,
  parse: (stored) => parseEntityEvent(stored.type, stored.data),
  schemaVersion: ENTITY_EVENT_VERSION,
};

export type RegistrationResult = 'created' | 'updated' | 'unchanged';

export interface RegisteredEntity {
  slug: string;
  result: RegistrationResult;
  /** Global position of the entity's last event: pass the largest as min_position to read the inventory back. */
  position: number;
}

export interface RegistrationReply {
  /** In payload order. */
  entities: RegisteredEntity[];
  /** The largest position above. */
  position: number;
}

export interface EntityCommandReply {
  slug: string;
  /** Global position of the last event appended; -1 when the command changed nothing. */
  position: number;
  events: string[];
}


const streams = new KeyedLock();

function run(deps: CommandDeps, slug: string, command: EntityCommand, ctx: CommandContext): Promise<Handled<EntityState, EntityEvent>> {
  const stream = entityStream(slug);
  return streams.run(stream, () => handleCommand(deps.store, stream, entityDecider, command, commandMetadata(deps, ctx), { retries: RETRIES }));
}

/** The entity folded from its stream, and the global position of its last event (0 when it has none). */
async function readEntity(store: EventStore, slug: string): Promise<{ entity: EntityState; position: number }> {
  const { events } = await store.readStream(entityStream(slug));
  const entity = events.map((e) => entityDecider.parse(e)).reduce(evolve, initialEntityState);
  return { entity, position: events.at(-1)?.position ?? 0 };
}

/** The entity as its events leave it; null when nothing was ever registered under the slug. */
export async function loadEntity(store: EventStore, slug: string): Promise<Entity | null> {
  return (await readEntity(store, slug)).entity;
}

/**
 * Registers (or re-registers) every entity of one payload: a refusal for any of them appends nothing for
 * all of them. Identical entities append nothing; changed ones append only what changed.
 */
export async function registerEntities(deps: CommandDeps, entities: readonly EntitySpecInput[], ctx: CommandContext): Promise<RegistrationReply> {
  const parsed = Inventory.safeParse({ entities });
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new RuleViolation('invalid_entity', detail);
  }
  const specs = parsed.data.entities;
  const slugs = new Set(specs.flatMap((spec) => (spec.type === 'host' ? [spec.slug] : [spec.slug, spec.parent])));
  const current = new Map<string, { entity: EntityState; position: number }>();
  for (const slug of slugs) current.set(slug, await readEntity(deps.store, slug));
  checkParents(specs, new Map([...current].map(([slug, read]) => [slug, read.entity])));
  // A refusal must come before the first append, so every entity is decided once on what was read.
  for (const spec of specs) decide({ type: 'register_entity', entity: spec }, current.get(spec.slug)?.entity ?? null);

  const results: RegisteredEntity[] = [];
  for (const index of registrationOrder(specs)) {
    const spec = specs[index]!;
    const handled = await run(deps, spec.slug, { type: 'register_entity', entity: spec }, ctx);
    const result: RegistrationResult = handled.events.length === 0 ? 'unchanged' : handled.before === null ? 'created' : 'updated';
    const position = handled.events.length === 0 ? (current.get(spec.slug)?.position ?? 0) : handled.position;
    results[index] = { slug: spec.slug, result, position };
  }
  return { entities: results, position: Math.max(0, ...results.map((r) => r.position)) };
}

function reply(slug: string, handled: Handled<EntityState, EntityEvent>): EntityCommandReply {
  return { slug, position: handled.position, events: handled.events.map((e) => e.type) };
}

/**
 * Pins the key a host presented at its first connection. The same key again changes nothing; another key
 * than the pinned one is refused (RuleViolation host_key_mismatch).
 */
export async function pinHostKey(deps: CommandDeps, slug: string, hostKey: string, ctx: CommandContext): Promise<EntityCommandReply> {
  const problem = hostKeyProblem(hostKey);
  if (problem !== null) throw new RuleViolation('invalid_host_key', `${slug}: ${problem}`);
  return reply(slug, await run(deps, slug, { type: 'pin_host_key', slug, host_key: hostKey }, ctx));
}

/** Moves an entity to `state` (e.g. destroyed after `pct destroy`); the same state again changes nothing. */
export async function setEntityState(
  deps: CommandDeps,
  slug: string,
  state: EntityLifecycle,
  reason: string,
  ctx: CommandContext,
): Promise<EntityCommandReply> {
  return reply(slug, await run(deps, slug, { type: 'set_entity_state', slug, state, reason }, ctx));
}

/** Why input a caller sent does not pass `schema`, naming each field, as RuleViolation `rule`. */
function parseOrRefuse<T extends z.ZodType>(schema: T, value: unknown, rule: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new RuleViolation(rule, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
}

/** A slug that could be in the inventory; anything else (pool:ludo-lvm, a typo) never is. */
function inventorySlug(slug: string): string {
  if (!EntitySlug.safeParse(slug).success) {
    throw new NotFound('entity', `${slug} is not in the inventory: it holds hosts, containers and VMs (host:NAME, lxc:NAME, vm:NAME)`, 'unknown_entity');
  }
  return slug;
}

/**
 * Records facts about an entity, merged into its attributes: each key given is set, a null value removes
 * the key. Keys already holding the same value append nothing. NotFound unknown_entity for a slug not in
 * the inventory; RuleViolation invalid_attributes for a malformed map, too_many_attributes past the cap.
 */
export async function updateEntityAttributes(
  deps: CommandDeps,
  slug: string,
  attributes: Record<string, unknown>,
  ctx: CommandContext,
): Promise<EntityCommandReply> {
  const update = parseOrRefuse(AttributesUpdate, { attributes }, 'invalid_attributes');
  return reply(slug, await run(deps, inventorySlug(slug), { type: 'update_entity_attributes', slug, attributes: update.attributes }, ctx));
}

/**
 * Records `from type to` on the from entity's stream (host:strong exports_to vm:zimaos). Both must be in the
 * inventory (NotFound unknown_entity, and nothing appended); the same relationship again appends nothing.
 * The type is a short lowercase word; "Depends-On" is read as depends_on.
 */
export async function createRelationship(
  deps: CommandDeps,
  input: { from: string; to: string; type: string },
  ctx: CommandContext,
): Promise<EntityCommandReply> {
  const from = inventorySlug(input.from);
  const spec = parseOrRefuse(RelationshipSpec, { to: inventorySlug(input.to), type: input.type }, 'invalid_relationship');
  // The from entity is checked by its decider; `to` lives on another stream, so it is looked up here.
  if ((await loadEntity(deps.store, spec.to)) === null) {
    throw new NotFound('entity', `${spec.to} is not in the inventory; register it first (POST /entities)`, 'unknown_entity');
  }
  return reply(from, await run(deps, from, { type: 'create_relationship', slug: from, to: spec.to, relationship: spec.type }, ctx));
}

/**
 * Retires an entity: an EntityRetired event, kept in history; the entity leaves the default lists and no
 * command runs on it (or on its guests). NotFound unknown_entity for a slug never registered; RuleViolation
 * already_retired when it is retired already (nothing appended).
 */
export async function retireEntity(deps: CommandDeps, slug: string, reason: string, ctx: CommandContext): Promise<EntityCommandReply> {
  const why = parseOrRefuse(RetirementReason, reason, 'invalid_reason');
  return reply(slug, await run(deps, inventorySlug(slug), { type: 'retire_entity', slug, reason: why }, ctx));
}

/** Brings a retired entity back (EntityRestored); RuleViolation not_retired when it is not retired. */
export async function restoreEntity(deps: CommandDeps, slug: string, reason: string, ctx: CommandContext): Promise<EntityCommandReply> {
  const why = parseOrRefuse(RetirementReason, reason, 'invalid_reason');
  return reply(slug, await run(deps, inventorySlug(slug), { type: 'restore_entity', slug, reason: why }, ctx));
}

/** An entity a command may run on: registered, not destroyed and not retired. */
async function runnable(store: EventStore, slug: string): Promise<Entity> {
  const entity = await loadEntity(store, slug);
  if (entity === null) throw new NotFound('entity', `${slug} is not in the inventory; list entities with GET /entities`, 'unknown_entity');
  if (entity.state === 'destroyed') throw new RuleViolation('entity_destroyed', `${slug} is destroyed; commands cannot run on it`);
  if (entity.retired) throw new RuleViolation('entity_retired', `${slug} is retired; commands cannot run on it (an operator restores it with POST /entities/${slug}/restore)`);
  return entity;
}

/** The inventory says too little to reach the target (no SSH address, a guest without host or Proxmox id). */
export class TargetUnreachable extends RuleViolation {
  constructor(detail: string) {
    super('target_unreachable', detail);
  }
}

function sshHostOf(host: Entity): SshHost {
  if (host.ssh === null) throw new TargetUnreachable(`${host.slug} has no SSH address in the inventory (register it with ssh: {host, port, user})`);
  return { slug: host.slug, address: host.ssh.host, port: host.ssh.port, user: host.ssh.user, hostKey: host.hostKey };
}

/**
 * Where a command on `slug` runs: a host through its own SSH connection, a container or VM through its
 * parent host's, with its Proxmox id. Throws NotFound unknown_entity, RuleViolation entity_destroyed (the
 * entity or its host), RuleViolation not_runnable for a slug that names no host, container or VM, or
 * TargetUnreachable when the inventory lacks what a connection needs.
 */
export async function resolveTarget(store: EventStore, slug: string): Promise<ExecTarget> {
  const type = EntityType.safeParse(slug.split(':', 1)[0]);
  if (!type.success) {
    throw new RuleViolation('not_runnable', `${slug} is not a host, container or VM; commands run on host:NAME, lxc:NAME or vm:NAME`);
  }
  const entity = await runnable(store, slug);
  if (entity.type === 'host') return { kind: 'host', host: sshHostOf(entity) };
  if (entity.parent === null || entity.pveId === null) throw new TargetUnreachable(`${slug} has no parent host or Proxmox id in the inventory, so nothing can reach it`);
  const host = await loadEntity(store, entity.parent);
  if (host === null) throw new NotFound('entity', `${slug} runs on ${entity.parent}, which is not in the inventory`, 'unknown_entity');
  if (host.state === 'destroyed') throw new RuleViolation('entity_destroyed', `${slug} runs on ${entity.parent}, which is destroyed`);
  if (host.retired) throw new RuleViolation('entity_retired', `${slug} runs on ${entity.parent}, which is retired; commands cannot run on it`);
  return { kind: entity.type, host: sshHostOf(host), pveId: entity.pveId };
}
