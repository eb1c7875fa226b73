// The entity decider: a registration becomes EntityRegistered, or the events for exactly what changed (none
// when nothing did); host keys are pinned once and never silently replaced; state changes say why. Beside
// it, the rules a whole inventory payload must pass before anything is appended.
import { NotFound, RuleViolation } from '../messages.ts';
import type { EntityCommand, EntitySpec } from './commands.ts';
import { type Attributes, type EntityEvent, type EntityEventOf, MAX_ATTRIBUTE_KEYS, parseSlug } from './events.ts';
import { type Entity, type EntityState, mergeAttributes } from './state.ts';

type CommandOf<T extends EntityCommand['type']> = Extract<EntityCommand, { type: T }>;

export function decide(command: EntityCommand, state: EntityState): EntityEvent[] {
  switch (command.type) {
    case 'register_entity':
      return state === null ? decideFirstRegistration(command.entity) : decideReregistration(command.entity, state);
    case 'pin_host_key':
      return decidePinHostKey(command, requireEntity(state, command.slug));
    case 'set_entity_state':
      return decideSetState(command, requireEntity(state, command.slug));
    case 'update_entity_attributes':
      return decideUpdateAttributes(command, requireEntity(state, command.slug));
    case 'create_relationship':
      return decideCreateRelationship(command, requireEntity(state, command.slug));
    case 'retire_entity':
      return decideRetire(command, requireEntity(state, command.slug));
    case 'restore_entity':
      return decideRestore(command, requireEntity(state, command.slug));
    default: {
      const unhandled: never = command;
      throw new Error(`decide: unhandled entity command ${JSON.stringify(unhandled)}`);
    }
  }
}

function requireEntity(state: EntityState, slug: string): Entity {
  if (state === null) throw new NotFound('entity', `${slug} is not in the inventory; register it first (POST /entities)`, 'unknown_entity');
  return state;
}

function decideFirstRegistration(spec: EntitySpec): EntityEvent[] {
  const name = parseSlug(spec.slug)?.name ?? spec.slug;
  const isHost = spec.type === 'host';
  const registered: EntityEvent = {
    type: 'EntityRegistered',
    data: {
      slug: spec.slug,
      type: spec.type,
      name,
      state: spec.state ?? 'active',
      parent: isHost ? null : spec.parent,
      pve_id: isHost ? null : spec.pve_id,
      ssh: isHost ? { host: spec.ssh.host, port: spec.ssh.port, user: spec.ssh.user } : null,
      attributes: spec.attributes ?? {},
    },
  };
  const hostKey = isHost ? spec.ssh.host_key : undefined;
  if (hostKey === undefined) return [registered];
  return [registered, { type: 'HostKeyPinned', data: { host_key: hostKey, pinned_by: 'operator', previous_host_key: null } }];
}

function decideReregistration(spec: EntitySpec, entity: Entity): EntityEvent[] {
  if (spec.type !== entity.type) throw new Error(`entity ${entity.slug} is a ${entity.type}, registered again as ${spec.type}`);
  const changes: EntityEventOf<'EntityUpdated'>['data'] = {};
  const events: EntityEvent[] = [];
  if (spec.type === 'host') {
    const ssh: NonNullable<typeof changes.ssh> = {};
    if (spec.ssh.host !== entity.ssh?.host) ssh.host = spec.ssh.host;
    if (spec.ssh.port !== entity.ssh?.port) ssh.port = spec.ssh.port;
    if (spec.ssh.user !== entity.ssh?.user) ssh.user = spec.ssh.user;
    if (Object.keys(ssh).length > 0) changes.ssh = ssh;
  } else {
    if (spec.parent !== entity.parent) changes.parent = spec.parent;
    if (spec.pve_id !== entity.pveId) changes.pve_id = spec.pve_id;
  }
  if (spec.attributes !== undefined && !sameJson(spec.attributes, entity.attributes)) changes.attributes = spec.attributes;
  if (Object.keys(changes).length > 0) events.push({ type: 'EntityUpdated', data: changes });
  // An operator who declares another key means it (the host was reinstalled); a connection never may.
  const hostKey = spec.type === 'host' ? spec.ssh.host_key : undefined;
  if (hostKey !== undefined && hostKey !== entity.hostKey) {
    events.push({ type: 'HostKeyPinned', data: { host_key: hostKey, pinned_by: 'operator', previous_host_key: entity.hostKey } });
  }
  if (spec.state !== undefined && spec.state !== entity.state) {
    events.push({ type: 'EntityStateChanged', data: { from: entity.state, to: spec.state, reason: 'registered' } });
  }
  return events;
}

function decidePinHostKey(command: CommandOf<'pin_host_key'>, entity: Entity): EntityEvent[] {
  if (entity.type !== 'host') throw new RuleViolation('not_a_host', `${entity.slug} is a ${entity.type}; host keys belong to hosts`);
  if (entity.state === 'destroyed') throw new RuleViolation('entity_destroyed', `${entity.slug} is destroyed; register it again before connecting to it`);
  if (entity.hostKey === command.host_key) return [];
  if (entity.hostKey !== null) {
    const by = entity.hostKeyPinnedBy === 'operator' ? 'by an operator' : 'at its first connection';
    throw new RuleViolation(
      'host_key_mismatch',
      `${entity.slug} presented host key ${abbreviate(command.host_key)} but ${abbreviate(entity.hostKey)} was pinned ${by}: ` +
        'refusing it. If the host was reinstalled, an operator registers it again with the new ssh.host_key.',
    );
  }
  return [{ type: 'HostKeyPinned', data: { host_key: command.host_key, pinned_by: 'first_connection', previous_host_key: null } }];
}

function decideSetState(command: CommandOf<'set_entity_state'>, entity: Entity): EntityEvent[] {
  if (command.state === entity.state) return [];
  // Only a new registration declares what came back; a state change alone would revive stale connection data.
  if (entity.state === 'destroyed') {
    throw new RuleViolation('entity_destroyed', `${entity.slug} is destroyed; register it again (POST /entities) to bring it back`);
  }
  return [{ type: 'EntityStateChanged', data: { from: entity.state, to: command.state, reason: command.reason } }];
}

/** Attributes merged: only keys whose value changes (or that go) are recorded; none → no event. */
function decideUpdateAttributes(command: CommandOf<'update_entity_attributes'>, entity: Entity): EntityEvent[] {
  const changes: Attributes = {};
  for (const [key, value] of Object.entries(command.attributes)) {
    if (value === null ? Object.hasOwn(entity.attributes, key) : !sameJson(entity.attributes[key], value)) changes[key] = value;
  }
  if (Object.keys(changes).length === 0) return [];
  const count = Object.keys(mergeAttributes(entity.attributes, changes)).length;
  if (count > MAX_ATTRIBUTE_KEYS) {
    throw new RuleViolation('too_many_attributes', `${entity.slug} would hold ${count} attributes, at most ${MAX_ATTRIBUTE_KEYS}; remove some (a null value removes a key)`);
  }
  return [{ type: 'EntityAttributesUpdated', data: { attributes: changes } }];
}

function decideCreateRelationship(command: CommandOf<'create_relationship'>, entity: Entity): EntityEvent[] {
  if (command.to === entity.slug) throw new RuleViolation('self_relationship', `${entity.slug} cannot relate to itself`);
  if (entity.relationships.some((r) => r.to === command.to && r.type === command.relationship)) return [];
  return [{ type: 'RelationshipCreated', data: { to: command.to, type: command.relationship } }];
}

function decideRetire(command: CommandOf<'retire_entity'>, entity: Entity): EntityEvent[] {
  if (entity.retired) throw new RuleViolation('already_retired', `${entity.slug} is already retired; restore it first (POST /entities/${entity.slug}/restore)`);
  return [{ type: 'EntityRetired', data: { reason: command.reason } }];
}

function decideRestore(command: CommandOf<'restore_entity'>, entity: Entity): EntityEvent[] {
  if (!entity.retired) throw new RuleViolation('not_retired', `${entity.slug} is not retired`);
  return [{ type: 'EntityRestored', data: { reason: command.reason } }];
}

function abbreviate(hostKey: string): string {
  return hostKey.length > 40 ? `${hostKey.slice(0, 40)}…` : hostKey;
}

/** Equal as JSON values: object key order does not matter. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

// ---- a whole payload ----

/**
 * Refuses a payload whose guests name a parent host that is neither registered nor in the payload, or one
 * that is (or is being declared) destroyed. `known` holds the current state of every parent named outside
 * the payload (null: never registered). A guest declared destroyed itself needs no live parent.
 */
export function checkParents(specs: readonly EntitySpec[], known: ReadonlyMap<string, EntityState>): void {
  const inPayload = new Map(specs.map((spec) => [spec.slug, spec]));
  specs.forEach((spec, index) => {
    if (spec.type === 'host' || spec.state === 'destroyed') return;
    const where = `entities.${index}.parent`;
    const declared = inPayload.get(spec.parent);
    const registered = known.get(spec.parent) ?? null;
    if (declared === undefined && registered === null) {
      throw new RuleViolation(
        'unknown_parent',
        `${where}: ${spec.slug}'s parent ${spec.parent} is not registered; register the host first or include it in the same payload`,
      );
    }
    const parentState = declared?.state ?? registered?.state ?? 'active';
    if (parentState === 'destroyed') {
      throw new RuleViolation('parent_destroyed', `${where}: ${spec.slug}'s parent ${spec.parent} is destroyed; a guest needs a live host`);
    }
  });
}

/** Hosts before their guests, otherwise in payload order: the index of each spec, in the order to register it. */
export function registrationOrder(specs: readonly EntitySpec[]): number[] {
  const indexes = specs.map((_, index) => index);
  return [...indexes.filter((i) => specs[i]?.type === 'host'), ...indexes.filter((i) => specs[i]?.type !== 'host')];
}
