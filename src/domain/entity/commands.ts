// The inventory's commands: an entity as operators declare it (POST /entities, `nomos fleet import`) and the
// commands the execution layer sends when it learns something about a host or a guest.
import { z } from 'zod';
import { Attributes, EntityLifecycle, EntitySlug, HostKey, PveId, RelationshipType, SshAddress, SshPort, SshUser, slugOfType } from './events.ts';

const common = {
  /** Omitted on a re-registration: the state stays as it is (a destroyed guest is not revived by an old file). */
  state: EntityLifecycle.optional(),
  /** Omitted on a re-registration: the attributes stay as they are; given, they replace the whole map. */
  attributes: Attributes.optional(),
};

export const HostSpec = z.strictObject({
  slug: slugOfType('host'),
  type: z.literal('host'),
  ssh: z.strictObject({
    host: SshAddress,
    port: SshPort.default(22),
    user: SshUser.default('root'),
    /** Omitted: a key pinned earlier (at first connection) is kept. */
    host_key: HostKey.optional(),
  }),
  ...common,
});

const guestSpec = <T extends 'lxc' | 'vm'>(type: T) =>
  z.strictObject({ slug: slugOfType(type), type: z.literal(type), parent: slugOfType('host'), pve_id: PveId, ...common });

export const LxcSpec = guestSpec('lxc');
export const VmSpec = guestSpec('vm');

export const EntitySpec = z.discriminatedUnion('type', [HostSpec, LxcSpec, VmSpec]);
export type EntitySpec = z.infer<typeof EntitySpec>;
/** What a caller may send: ssh.port and ssh.user may be left to their defaults. */
export type EntitySpecInput = z.input<typeof EntitySpec>;

export const MAX_ENTITIES_PER_PAYLOAD = 1000;

export const Inventory = z
  .strictObject({ entities: z.array(EntitySpec).min(1).max(MAX_ENTITIES_PER_PAYLOAD) })
  .superRefine(({ entities }, ctx) => {
    const first = new Map<string, number>();
    entities.forEach((entity, index) => {
      const seen = first.get(entity.slug);
      if (seen === undefined) first.set(entity.slug, index);
      else ctx.addIssue({ code: 'custom', path: ['entities', index, 'slug'], message: `duplicate slug ${entity.slug} (also entities.${seen})` });
    });
  });
export type Inventory = z.infer<typeof Inventory>;

/** An inventory `{entities: [...]}`, or one entity object on its own (read as an inventory of one). */
export const InventoryPayload = z.preprocess(
  (value) => (typeof value === 'object' && value !== null && !Array.isArray(value) && !('entities' in value) ? { entities: [value] } : value),
  Inventory,
);

/** update_entity_attributes: the keys to set, and null for each key to remove. */
export const AttributesUpdate = z.strictObject({ attributes: Attributes });

/** "Depends-On " and "depends_on" name one relationship type. */
const RelationshipTypeInput = z
  .string()
  .max(100)
  .transform((s) => s.trim().toLowerCase().replace(/[\s-]+/g, '_'))
  .pipe(RelationshipType);

/** create_relationship, seen from the entity it starts at: `from type to`. */
export const RelationshipSpec = z.strictObject({ to: EntitySlug, type: RelationshipTypeInput });
export type RelationshipSpec = z.infer<typeof RelationshipSpec>;

/** Commands on one entity stream. Slugs are carried for the refusals' messages. */
export type EntityCommand =
  | { type: 'register_entity'; entity: EntitySpec }
  /** The key an SSH connection saw, as "TYPE BASE64". */
  | { type: 'pin_host_key'; slug: string; host_key: string }
  | { type: 'set_entity_state'; slug: string; state: EntityLifecycle; reason: string }
  | { type: 'update_entity_attributes'; slug: string; attributes: Attributes }
  /** `to` is known to be in the inventory: the command layer looked before sending this. */
  | { type: 'create_relationship'; slug: string; to: string; relationship: RelationshipType }
  | { type: 'retire_entity'; slug: string; reason: string }
  | { type: 'restore_entity'; slug: string; reason: string };

/** Why an entity is retired or restored: optional, short. */
export const RetirementReason = z.string().trim().max(1000);
