// Every event an entity stream (one host, container or VM of the fleet inventory) can hold, with the field
// schemas the inventory's commands share. Each event is parsed back through these schemas.
import { z } from 'zod';

export const EntityType = z.enum(['host', 'lxc', 'vm']);
export type EntityType = z.infer<typeof EntityType>;

export const EntityLifecycle = z.enum(['provisioning', 'active', 'destroyed']);
export type EntityLifecycle = z.infer<typeof EntityLifecycle>;

export const PinnedBy = z.enum(['first_connection', 'operator']);
export type PinnedBy = z.infer<typeof PinnedBy>;

const NAME = /^[A-Za-z0-9._-]{1,63}$/;
const SLUG = /^(host|lxc|vm):([A-Za-z0-9._-]{1,63})$/;

/** `type:name` of any inventory type, e.g. host:strong, lxc:rclone, vm:zimaos. */
export const EntitySlug = z
  .string()
  .regex(SLUG, 'slug must be TYPE:NAME with TYPE host, lxc or vm and NAME of 1–63 letters, digits, ".", "_" or "-"');

/** A slug whose prefix is `type`. */
export function slugOfType(type: EntityType) {
  return z.string().refine((s) => s.startsWith(`${type}:`) && NAME.test(s.slice(type.length + 1)), {
    message: `slug must be ${type}:NAME with NAME of 1–63 letters, digits, ".", "_" or "-"`,
  });
}

/** The parts of a well-formed slug; null for anything else (pool:x, a path, a typo). */
export function parseSlug(slug: string): { type: EntityType; name: string } | null {
  const match = SLUG.exec(slug);
  return match ? { type: EntityType.parse(match[1]), name: match[2]! } : null;
}

/** Host name or IP address; never starting with "-", so it can never be read as an ssh option. */
export const SshAddress = z.string().regex(/^[A-Za-z0-9.:_%][A-Za-z0-9.:_%-]{0,252}$/, 'ssh.host must be a host name or an IP address');
export const SshPort = z.number().int().min(1).max(65535);
export const SshUser = z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$/, 'ssh.user must be a user name (letters, digits, ".", "_", "-")');

const HOST_KEY_TYPES = [
  'ssh-ed25519',
  'ssh-rsa',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
];

/** Why `value` is not an OpenSSH public key "TYPE BASE64", or null when it is one. */
export function hostKeyProblem(value: string): string | null {
  const match = /^(\S+) ([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!match) return 'host_key must be "TYPE BASE64" as in known_hosts, e.g. "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA…"';
  const [, type = '', data = ''] = match;
  if (!HOST_KEY_TYPES.includes(type)) return `host_key type ${type.slice(0, 40)} is not one of ${HOST_KEY_TYPES.join(', ')}`;
  if (data.length % 4 !== 0) return 'host_key data is not valid base64';
  // The key blob opens with its own type name (uint32 length, then the name): a pasted key whose data
  // belongs to another type, or is cut short, is caught here rather than at the first connection.
  const blob = atob(data);
  const length = ((blob.charCodeAt(0) << 24) | (blob.charCodeAt(1) << 16) | (blob.charCodeAt(2) << 8) | blob.charCodeAt(3)) >>> 0;
  if (blob.length < 4 + length || blob.slice(4, 4 + length) !== type) return `host_key data is not a ${type} key`;
  return null;
}

export const HostKey = z
  .string()
  .max(16_384)
  .superRefine((value, ctx) => {
    const problem = hostKeyProblem(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Proxmox VMID of a container or VM. */
export const PveId = z.number().int().min(1, 'pve_id must be a positive integer').max(999_999_999);

export const MAX_ATTRIBUTE_KEYS = 100;

/** Attribute values are JSON; deeper nesting than this is refused (an attribute is a fact, not a document). */
export const MAX_ATTRIBUTE_DEPTH = 8;

function depthExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  return Object.values(value).some((v) => depthExceeds(v, limit - 1));
}

/** A flat map of named facts (string → JSON); a registration replaces the whole map, an attributes update merges into it. */
export const Attributes = z
  .record(z.string().min(1).max(100), z.json())
  .refine((v) => Object.keys(v).length <= MAX_ATTRIBUTE_KEYS, `attributes hold at most ${MAX_ATTRIBUTE_KEYS} keys`)
  .refine((v) => !depthExceeds(v, MAX_ATTRIBUTE_DEPTH), `attributes nest deeper than ${MAX_ATTRIBUTE_DEPTH} levels`);
export type Attributes = z.infer<typeof Attributes>;

/** How one entity relates to another: a short lowercase word such as hosts, mounts, depends_on, backs_up, exports_to. */
export const RelationshipType = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,49}$/, 'type must be a short lowercase word (letters, digits, "_"), e.g. hosts, mounts, depends_on');
export type RelationshipType = z.infer<typeof RelationshipType>;

export const SshConnection = z.object({ host: SshAddress, port: SshPort, user: SshUser });
export type SshConnection = z.infer<typeof SshConnection>;

export const entityEventSchemas = {
  /** The entity entered the inventory. Its host key, if known, follows as HostKeyPinned. */
  EntityRegistered: z.object({
    slug: EntitySlug,
    type: EntityType,
    name: z.string(),
    state: EntityLifecycle,
    /** Guests only: the host they run on. */
    parent: EntitySlug.nullable(),
    pve_id: PveId.nullable(),
    /** Hosts only. */
    ssh: SshConnection.nullable(),
    attributes: Attributes,
  }),
  /** A re-registration changed these fields, and only these; ssh holds only its changed parts. */
  EntityUpdated: z.object({
    ssh: SshConnection.partial().optional(),
    parent: EntitySlug.optional(),
    pve_id: PveId.optional(),
    attributes: Attributes.optional(),
  }),
  HostKeyPinned: z.object({ host_key: HostKey, pinned_by: PinnedBy, previous_host_key: HostKey.nullable() }),
  EntityStateChanged: z.object({ from: EntityLifecycle, to: EntityLifecycle, reason: z.string() }),
  /** Facts recorded about the entity, merged into its attributes: the keys that changed, null for a key removed. */
  EntityAttributesUpdated: z.object({ attributes: Attributes }),
  /** This entity (the stream's) relates to `to`: `from type to`, e.g. host:strong exports_to vm:zimaos. */
  RelationshipCreated: z.object({ to: EntitySlug, type: RelationshipType }),
  /**
   * Taken out of the fleet: kept in history, off the default lists, and no command runs on it (or on its guests)
   * until it is restored. Who retired it is the event's actor.
   */
  EntityRetired: z.object({ reason: z.string().max(1000) }),
  /** Back in the fleet after a retirement. */
  EntityRestored: z.object({ reason: z.string().max(1000) }),
} as const;

export const ENTITY_EVENT_VERSION = 1;

type Schemas = typeof entityEventSchemas;
export type EntityEventType = keyof Schemas;
export type EntityEvent = { [K in EntityEventType]: { type: K; data: z.infer<Schemas[K]> } }[EntityEventType];
export type EntityEventOf<K extends EntityEventType> = Extract<EntityEvent, { type: K }>;

export function isEntityEventType(type: string): type is EntityEventType {
  return Object.hasOwn(entityEventSchemas, type);
}

/** Parses a stored event back into the union; throws on an unknown type or a malformed payload. */
export function parseEntityEvent(type: string, data: unknown): EntityEvent {
  if (!isEntityEventType(type)) throw new Error(`unknown entity event type ${type}`);
  return { type, data: entityEventSchemas[type].parse(data) } as EntityEvent;
}
