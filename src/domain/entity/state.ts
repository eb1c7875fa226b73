// An entity folded from its stream: what the deciders compare a re-registration against, and what the
// execution layer reads to reach it. null until the entity is registered.
import type { Attributes, EntityEvent, EntityLifecycle, EntityType, PinnedBy, RelationshipType, SshConnection } from './events.ts';

/** An explicit relationship from this entity; the implicit host → guest one is its `parent`. */
export interface Relationship {
  readonly to: string;
  readonly type: RelationshipType;
}

export interface Entity {
  readonly slug: string;
  readonly type: EntityType;
  readonly name: string;
  readonly state: EntityLifecycle;
  readonly parent: string | null;
  readonly pveId: number | null;
  readonly ssh: SshConnection | null;
  readonly hostKey: string | null;
  readonly hostKeyPinnedBy: PinnedBy | null;
  readonly attributes: Attributes;
  readonly relationships: readonly Relationship[];
  /** Retired: off the default lists, and no command runs on it. */
  readonly retired: boolean;
}

export type EntityState = Entity | null;

export const initialEntityState: EntityState = null;

export function evolve(state: EntityState, event: EntityEvent): EntityState {
  if (event.type === 'EntityRegistered') {
    const { slug, type, name, state: lifecycle, parent, pve_id, ssh, attributes } = event.data;
    return { slug, type, name, state: lifecycle, parent, pveId: pve_id, ssh, hostKey: null, hostKeyPinnedBy: null, attributes, relationships: [], retired: false };
  }
  // Nothing but EntityRegistered can open a stream; a stray event before it changes nothing.
  if (state === null) return state;
  switch (event.type) {
    case 'EntityUpdated': {
      const { ssh, parent, pve_id, attributes } = event.data;
      return {
        ...state,
        ...(ssh !== undefined && state.ssh !== null && { ssh: { host: ssh.host ?? state.ssh.host, port: ssh.port ?? state.ssh.port, user: ssh.user ?? state.ssh.user } }),
        ...(parent !== undefined && { parent }),
        ...(pve_id !== undefined && { pveId: pve_id }),
        ...(attributes !== undefined && { attributes }),
      };
    }
    case 'HostKeyPinned':
      return { ...state, hostKey: event.data.host_key, hostKeyPinnedBy: event.data.pinned_by };
    case 'EntityStateChanged':
      return { ...state, state: event.data.to };
    case 'EntityAttributesUpdated':
      return { ...state, attributes: mergeAttributes(state.attributes, event.data.attributes) };
    case 'RelationshipCreated':
      return { ...state, relationships: [...state.relationships, { to: event.data.to, type: event.data.type }] };
    case 'EntityRetired':
      return { ...state, retired: true };
    case 'EntityRestored':
      return { ...state, retired: false };
    default: {
      const unhandled: never = event;
      throw new Error(`evolve: unhandled entity event ${JSON.stringify(unhandled)}`);
    }
  }
}

/** `current` with `changes` merged in: each key set to its value, or removed where the value is null. */
export function mergeAttributes(current: Attributes, changes: Attributes): Attributes {
  const merged: Attributes = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
