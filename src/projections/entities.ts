// The entities read model: the fleet inventory, one row per host, container or VM, the relationships
// between them, and the queries that read it.
//
//   EntityRegistered         inserts the row (created_at)
//   EntityUpdated            sets the fields that changed
//   HostKeyPinned            host_key and who pinned it
//   EntityStateChanged       state
//   EntityAttributesUpdated  merges into attributes (null removes a key)
//   RelationshipCreated      an entity_relations row from the stream's entity
// Each one moves updated_at.
import { z } from 'zod';
import type { Queryable } from '../ports/db.ts';
import {
  Attributes,
  EntityLifecycle,
  type EntityEvent,
  EntityType,
  PinnedBy,
  entityEventSchemas,
  parseEntityEvent,
} from '../domain/entity/events.ts';
import { entitySlugOf } from '../domain/entity/stream.ts';
import { eachEvent, type Projection } from './projection.ts';
import { occurredAt, pgJson } from './rows.ts';

// 2: entity_relations, attributes updates.
const TABLES_VERSION = 2;

// ---- the projection ----

async function applyEvent(tx: Queryable, slug: string, e: EntityEvent, at: string): Promise<void> {
  switch (e.type) {
    case 'EntityRegistered': {
      const { type, name, state, parent, pve_id, ssh, attributes } = e.data;
      await tx.query(
        `INSERT INTO entities (slug, type, name, state, parent, pve_id, ssh_host, ssh_port, ssh_user, attributes, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $11) ON CONFLICT (slug) DO NOTHING`,
        [slug, type, name, state, parent, pve_id, ssh?.host ?? null, ssh?.port ?? null, ssh?.user ?? null, pgJson(attributes), at],
      );
      return;
    }
    case 'EntityUpdated': {
      const { ssh, parent, pve_id, attributes } = e.data;
      const params: unknown[] = [slug, at];
      const sets = ['updated_at = $2'];
      const set = (column: string, value: unknown, cast = '') => {
        params.push(value);
        sets.push(`${column} = $${params.length}${cast}`);
      };
      if (ssh?.host !== undefined) set('ssh_host', ssh.host);
      if (ssh?.port !== undefined) set('ssh_port', ssh.port);
      if (ssh?.user !== undefined) set('ssh_user', ssh.user);
      if (parent !== undefined) set('parent', parent);
      if (pve_id !== undefined) set('pve_id', pve_id);
      if (attributes !== undefined) set('attributes', pgJson(attributes), '::jsonb');
      await tx.query(`UPDATE entities SET ${sets.join(', ')} WHERE slug = $1`, params);
      return;
    }
    case 'HostKeyPinned':
      await tx.query('UPDATE entities SET host_key = $2, host_key_pinned_by = $3, updated_at = $4 WHERE slug = $1', [slug, e.data.host_key, e.data.pinned_by, at]);
      return;
    case 'EntityStateChanged':
      await tx.query('UPDATE entities SET state = $2, updated_at = $3 WHERE slug = $1', [slug, e.data.to, at]);
      return;
    case 'EntityAttributesUpdated': {
      const entries = Object.entries(e.data.attributes);
      const set = Object.fromEntries(entries.filter(([, value]) => value !== null));
      const removed = entries.filter(([, value]) => value === null).map(([key]) => key);
      await tx.query('UPDATE entities SET attributes = (attributes || $2::jsonb) - $3::text[], updated_at = $4 WHERE slug = $1', [slug, pgJson(set), removed, at]);
      return;
    }
    case 'RelationshipCreated':
      await tx.query('INSERT INTO entity_relations (from_slug, to_slug, type, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
        slug,
        e.data.to,
        e.data.type,
        at,
      ]);
      await tx.query('UPDATE entities SET updated_at = $2 WHERE slug = $1', [slug, at]);
      return;
    default: {
      const unhandled: never = e;
      throw new Error(`entities projection: unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

export const entitiesProjection: Projection = {
  name: 'entities',
  version: TABLES_VERSION,
  tables: ['entity_relations', 'entities'],
  handles: new Set(Object.keys(entityEventSchemas)),
  applyBatch: eachEvent(async (tx, event) => {
    const slug = entitySlugOf(event.streamName);
    if (slug === null) return;
    await applyEvent(tx, slug, parseEntityEvent(event.type, event.data), occurredAt(event));
  }),
};

// ---- queries ----

export interface EntityView {
  slug: string;
  type: EntityType;
  name: string;
  state: EntityLifecycle;
  parent: string | null;
  pve_id: number | null;
  /** Hosts only. */
  ssh: { host: string; port: number; user: string; host_key: string | null; host_key_pinned_by: PinnedBy | null } | null;
  attributes: Attributes;
  /** Hosts, read one at a time: the slugs of their guests. */
  children?: string[];
  created_at: string;
  updated_at: string;
}

const EntityRow = z.object({
  slug: z.string(),
  type: EntityType,
  name: z.string(),
  state: EntityLifecycle,
  parent: z.string().nullable(),
  pve_id: z.number().int().nullable(),
  ssh_host: z.string().nullable(),
  ssh_port: z.number().int().nullable(),
  ssh_user: z.string().nullable(),
  host_key: z.string().nullable(),
  host_key_pinned_by: PinnedBy.nullable(),
  attributes: Attributes,
  created_at: z.date(),
  updated_at: z.date(),
});

const COLUMNS = Object.keys(EntityRow.shape).join(', ');

function toView(raw: unknown): EntityView {
  const row = EntityRow.parse(raw);
  const { ssh_host, ssh_port, ssh_user, host_key, host_key_pinned_by, created_at, updated_at, ...rest } = row;
  const ssh =
    ssh_host === null || ssh_port === null || ssh_user === null ? null : { host: ssh_host, port: ssh_port, user: ssh_user, host_key, host_key_pinned_by };
  return { ...rest, ssh, created_at: created_at.toISOString(), updated_at: updated_at.toISOString() };
}

export interface EntityFilter {
  type?: EntityType;
  state?: EntityLifecycle;
}

/** Every entity matching the filter, by slug. The inventory is a fleet, not a log: it is listed whole. */
export async function listEntities(db: Queryable, filter: EntityFilter = {}): Promise<EntityView[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.type !== undefined) where.push(`type = $${params.push(filter.type)}`);
  if (filter.state !== undefined) where.push(`state = $${params.push(filter.state)}`);
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM entities ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY slug`, params);
  return rows.map(toView);
}

/** One entity; a host comes with the slugs of its guests (destroyed ones included: their state says so). */
export async function getEntity(db: Queryable, slug: string): Promise<EntityView | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM entities WHERE slug = $1`, [slug]);
  if (rows[0] === undefined) return null;
  const entity = toView(rows[0]);
  if (entity.type !== 'host') return entity;
  const children = await db.query<{ slug: string }>('SELECT slug FROM entities WHERE parent = $1 ORDER BY slug', [slug]);
  return { ...entity, children: children.rows.map((r) => r.slug) };
}

export interface Relations {
  /** `slug type to`: explicit relationships from this entity, and `hosts` for each guest of a host. */
  outgoing: Array<{ to: string; type: string }>;
  /** `from type slug`: explicit relationships to this entity, and `hosts` from a guest's host. */
  incoming: Array<{ from: string; type: string }>;
}

/**
 * What an entity relates to, both ways, each by type then slug; null for a slug not in the inventory. The
 * host → guest relation is implicit in a guest's parent and listed as `hosts` (destroyed guests included,
 * as in a host's children); recorded explicitly as well, it is listed once.
 */
export async function getRelations(db: Queryable, slug: string): Promise<Relations | null> {
  const entity = await getEntity(db, slug);
  if (entity === null) return null;
  const { rows } = await db.query<{ from_slug: string; to_slug: string; type: string }>(
    `SELECT from_slug, to_slug, type FROM entity_relations WHERE from_slug = $1
     UNION SELECT $2::text, slug, 'hosts' FROM entities WHERE parent = $1
     UNION SELECT parent, $2::text, 'hosts' FROM entities WHERE slug = $1 AND parent IS NOT NULL
     UNION SELECT from_slug, to_slug, type FROM entity_relations WHERE to_slug = $1
     ORDER BY type, from_slug, to_slug`,
    [slug, slug],
  );
  return {
    outgoing: rows.filter((r) => r.from_slug === slug).map((r) => ({ to: r.to_slug, type: r.type })),
    incoming: rows.filter((r) => r.to_slug === slug).map((r) => ({ from: r.from_slug, type: r.type })),
  };
}

/** How many entities of each type are in each state. */
export async function entityCounts(db: Queryable): Promise<Array<{ type: string; state: string; count: number }>> {
  const { rows } = await db.query<{ type: string; state: string; count: number }>('SELECT type, state, count(*)::int AS count FROM entities GROUP BY type, state ORDER BY type, state');
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/**
 * The SSH address of each registered host that is not destroyed, to its slug: how the retry cap knows that an
 * `ssh ADDRESS …` hop from one host runs on another. An address two hosts share names the first by slug.
 */
export async function hostAddresses(db: Queryable): Promise<Map<string, string>> {
  const { rows } = await db.query<{ ssh_host: string; slug: string }>(
    "SELECT ssh_host, slug FROM entities WHERE type = 'host' AND state <> 'destroyed' AND ssh_host IS NOT NULL ORDER BY slug",
  );
  const addresses = new Map<string, string>();
  for (const { ssh_host, slug } of rows) if (!addresses.has(ssh_host)) addresses.set(ssh_host, slug);
  return addresses;
}
