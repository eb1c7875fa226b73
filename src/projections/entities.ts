// The entities read model: the fleet inventory, one row per host, container or VM, the relationships
// between them, and the queries that read it.
//
//   EntityRegistered         inserts the row (created_at)
//   EntityUpdated            sets the fields that changed
//   HostKeyPinned            host_key and who pinned it
//   EntityStateChanged       state
//   EntityAttributesUpdated  merges into attributes (null removes a key)
//   RelationshipCreated      an entity_relations row from the stream's entity
//   EntityRetired/Restored   retired_at, retired_by (the event's actor), retired_reason
// Each one moves updated_at. From the sessions' executions, each host's health as commands saw it (not
// updated_at: the inventory record did not change):
//   ExecutionRequested       remembers the host the target runs through (entity_execution_hosts)
//   ExecutionStarted         its connection is being attempted
//   ExecutionSucceeded/Failed/TimedOut   it ran, whatever its exit: last_contact_at
//   ExecutionRefused         after a start, as unreachable or for a host key: last_failure_at, last_error
// The host's reachability checks (host_reachability, written by src/fleet/reachability.ts) are joined in
// by the queries. A batch applies its entity events one by one and the execution events between two of them as a
// run, a statement a table (a third of a log is execution events; a statement each held a rebuild to ~30 000
// events/s: bench/profile-notes.md).
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
import { Actor, actorName } from '../domain/messages.ts';
import type { ProjectedEvent } from '../ports/event-store.ts';
import type { Projection } from './projection.ts';
import { occurredAt, pgJson, sessionEventsIn } from './rows.ts';

// 2: entity_relations, attributes updates. 3: retirement, hosts' health from executions.
const TABLES_VERSION = 3;

/** The session events that tell about a host's health. */
const EXECUTION_EVENTS = ['ExecutionRequested', 'ExecutionStarted', 'ExecutionSucceeded', 'ExecutionFailed', 'ExecutionTimedOut', 'ExecutionRefused'] as const;
const EXECUTION_EVENT_TYPES: ReadonlySet<string> = new Set(EXECUTION_EVENTS);
/** Refusals that mean the connection to the host failed. */
const CONNECTION_REFUSALS = new Set(['unreachable', 'host_key_mismatch']);

// ---- the projection ----

async function applyEvent(tx: Queryable, slug: string, e: EntityEvent, at: string, metadata: Record<string, unknown>): Promise<void> {
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
    case 'EntityRetired': {
      const actor = Actor.safeParse(metadata.actor);
      await tx.query('UPDATE entities SET retired_at = $2, retired_by = $3, retired_reason = $4, updated_at = $2 WHERE slug = $1', [
        slug,
        at,
        actor.success ? actorName(actor.data) : null,
        e.data.reason,
      ]);
      return;
    }
    case 'EntityRestored':
      await tx.query('UPDATE entities SET retired_at = NULL, retired_by = NULL, retired_reason = NULL, updated_at = $2 WHERE slug = $1', [slug, at]);
      return;
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

/** An execution in flight on a host: as stored in entity_execution_hosts, or requested in the run at hand. */
interface InFlight {
  readonly host: string;
  started: boolean;
  /** A row of entity_execution_hosts before the run (else one to insert). */
  readonly stored: boolean;
  /** A stored row whose `started` the run set. */
  startedNow: boolean;
}

/** An ISO UTC time as a key that sorts as the times do, whatever the digits of its fraction (occurredAt's form). */
const timeKey = (at: string): string => `${at.slice(0, 19)}.${(at.slice(20, -1) || '').padEnd(9, '0').slice(0, 9)}`;

/**
 * A run of execution events (no entity event among them, so the inventory stands still) applied as a whole, with
 * the rows a statement per event would leave: the targets' hosts and the run's executions in flight read once, the
 * run folded in memory in its order, then a statement per table. Contacts keep the latest time per host (GREATEST
 * does not care for order); a refusal's failure keeps its per-event statement (rare, and its order matters).
 */
async function applyExecutions(tx: Queryable, events: readonly ProjectedEvent[]): Promise<void> {
  const entries = sessionEventsIn(events);
  const ids = new Set<string>();
  const targets = new Set<string>();
  for (const { event: e } of entries) {
    if (!EXECUTION_EVENT_TYPES.has(e.type) || !('execution_id' in e.data)) continue;
    ids.add(e.data.execution_id);
    if (e.type === 'ExecutionRequested') targets.add(e.data.target);
  }
  if (ids.size === 0) return;
  // A guest runs through its host; a target not in the inventory has no host to speak of.
  const hostOf = new Map(
    targets.size === 0
      ? []
      : (
          await tx.query<{ slug: string; host: string }>(
            `SELECT slug, CASE WHEN type = 'host' THEN slug ELSE parent END AS host FROM entities WHERE slug = ANY($1::text[]) AND (type = 'host' OR parent IS NOT NULL)`,
            [[...targets]],
          )
        ).rows.map((r) => [r.slug, r.host]),
  );
  const inFlight = new Map<string, InFlight>(
    (await tx.query<{ execution_id: string; host: string; started: boolean }>('SELECT execution_id, host, started FROM entity_execution_hosts WHERE execution_id = ANY($1::text[])', [[...ids]])).rows.map((r) => [
      r.execution_id,
      { host: r.host, started: r.started, stored: true, startedNow: false },
    ]),
  );
  const ended = new Set<string>();
  const contacts = new Map<string, { at: string; key: string }>();
  const failures: [host: string, at: string, detail: string][] = [];
  const end = (id: string): InFlight | undefined => {
    const flight = inFlight.get(id);
    if (flight === undefined) return undefined;
    inFlight.delete(id);
    if (flight.stored) ended.add(id);
    return flight;
  };
  for (const { event: e, stored } of entries) {
    switch (e.type) {
      case 'ExecutionRequested': {
        const host = hostOf.get(e.data.target);
        if (host !== undefined && !inFlight.has(e.data.execution_id)) inFlight.set(e.data.execution_id, { host, started: false, stored: false, startedNow: false });
        break;
      }
      case 'ExecutionStarted': {
        const flight = inFlight.get(e.data.execution_id);
        if (flight && !flight.started) [flight.started, flight.startedNow] = [true, flight.stored];
        break;
      }
      case 'ExecutionSucceeded':
      case 'ExecutionFailed':
      case 'ExecutionTimedOut': {
        const flight = end(e.data.execution_id);
        if (flight === undefined) break;
        const at = occurredAt(stored);
        const key = timeKey(at);
        const before = contacts.get(flight.host);
        if (before === undefined || key > before.key) contacts.set(flight.host, { at, key });
        break;
      }
      case 'ExecutionRefused': {
        const flight = end(e.data.execution_id);
        if (flight?.started && CONNECTION_REFUSALS.has(e.data.reason)) failures.push([flight.host, occurredAt(stored), e.data.detail.slice(0, 2000)]);
        break;
      }
      default:
        break;
    }
  }
  // A row ended and requested again in one run is deleted, then inserted: as the statements one by one would.
  if (ended.size > 0) await tx.query('DELETE FROM entity_execution_hosts WHERE execution_id = ANY($1::text[])', [[...ended]]);
  const inserted = [...inFlight].filter(([, f]) => !f.stored);
  if (inserted.length > 0) {
    await tx.query('INSERT INTO entity_execution_hosts (execution_id, host, started) SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[])', [
      inserted.map(([id]) => id),
      inserted.map(([, f]) => f.host),
      inserted.map(([, f]) => f.started),
    ]);
  }
  const startedNow = [...inFlight].filter(([id, f]) => f.stored && f.startedNow && !ended.has(id)).map(([id]) => id);
  if (startedNow.length > 0) await tx.query('UPDATE entity_execution_hosts SET started = true WHERE execution_id = ANY($1::text[])', [startedNow]);
  if (contacts.size > 0) {
    await tx.query(
      `UPDATE entities e SET last_contact_at = GREATEST(e.last_contact_at, c.at)
         FROM unnest($1::text[], $2::timestamptz[]) AS c(slug, at) WHERE e.slug = c.slug`,
      [[...contacts.keys()], [...contacts.values()].map((c) => c.at)],
    );
  }
  for (const [host, at, detail] of failures) {
    await tx.query('UPDATE entities SET last_failure_at = $2::timestamptz, last_error = $3 WHERE slug = $1 AND (last_failure_at IS NULL OR last_failure_at <= $2::timestamptz)', [host, at, detail]);
  }
}

export const entitiesProjection: Projection = {
  name: 'entities',
  version: TABLES_VERSION,
  tables: ['entity_relations', 'entity_execution_hosts', 'entities'],
  handles: new Set([...Object.keys(entityEventSchemas), ...EXECUTION_EVENTS]),
  // Entity events one by one (few: the inventory); the execution events between two of them as one run.
  async applyBatch(tx, events) {
    let run: ProjectedEvent[] = [];
    for (const event of events) {
      const slug = entitySlugOf(event.streamName);
      if (slug === null) {
        run.push(event);
        continue;
      }
      if (run.length > 0) await applyExecutions(tx, run);
      run = [];
      await applyEvent(tx, slug, parseEntityEvent(event.type, event.data), occurredAt(event), event.metadata);
    }
    if (run.length > 0) await applyExecutions(tx, run);
  },
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
  /** Set when the entity was retired: when, by whom (role:name), and why. */
  retired: { at: string; by: string | null; reason: string } | null;
  /** Hosts only: how reachable the host is, from executions and reachability checks. */
  health: HostHealth | null;
  /** Hosts, read one at a time: the slugs of their guests. */
  children?: string[];
  created_at: string;
  updated_at: string;
}

/**
 * A host's health: the latest of its contacts (a command that ran, whatever its exit code, or a check that
 * reached it) against the latest of its failures (a connection refused or a host key that did not match, or a
 * check that could not reach it).
 */
export interface HostHealth {
  /** true: the latest word from the host was a contact; false: a failure; null: never tried. */
  reachable: boolean | null;
  last_contact_at: string | null;
  last_failure_at: string | null;
  /** The latest failure's error. */
  last_error: string | null;
  /** When the reachability check last looked at it (null: never). */
  checked_at: string | null;
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
  retired_at: z.date().nullable(),
  retired_by: z.string().nullable(),
  retired_reason: z.string().nullable(),
  last_contact_at: z.date().nullable(),
  last_failure_at: z.date().nullable(),
  last_error: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});

const HealthRow = z.object({
  checked_at: z.date().nullable(),
  last_ok_at: z.date().nullable(),
  last_failed_at: z.date().nullable(),
  last_failed_error: z.string().nullable(),
});

const COLUMNS = [...Object.keys(EntityRow.shape).map((c) => `e.${c}`), 'r.checked_at', 'r.last_ok_at', 'r.last_failed_at', 'r.last_failed_error'].join(', ');
const FROM = 'entities e LEFT JOIN host_reachability r ON r.slug = e.slug';

const latest = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null ? a : a > b ? a : b);

/** Executions' word and the checks' word on a host, merged: the latest of each kind wins. */
function healthOf(row: z.infer<typeof EntityRow>, check: z.infer<typeof HealthRow>): HostHealth {
  const contact = latest(row.last_contact_at, check.last_ok_at);
  const failure = latest(row.last_failure_at, check.last_failed_at);
  const fromCheck = check.last_failed_at !== null && (row.last_failure_at === null || check.last_failed_at >= row.last_failure_at);
  return {
    reachable: contact === null && failure === null ? null : failure === null || (contact !== null && contact > failure),
    last_contact_at: contact?.toISOString() ?? null,
    last_failure_at: failure?.toISOString() ?? null,
    last_error: fromCheck ? check.last_failed_error : row.last_error,
    checked_at: check.checked_at?.toISOString() ?? null,
  };
}

function toView(raw: unknown): EntityView {
  const row = EntityRow.parse(raw);
  const check = HealthRow.parse(raw);
  const { ssh_host, ssh_port, ssh_user, host_key, host_key_pinned_by, created_at, updated_at, retired_at, retired_by, retired_reason, last_contact_at: _c, last_failure_at: _f, last_error: _e, ...rest } = row;
  const ssh =
    ssh_host === null || ssh_port === null || ssh_user === null ? null : { host: ssh_host, port: ssh_port, user: ssh_user, host_key, host_key_pinned_by };
  return {
    ...rest,
    ssh,
    retired: retired_at === null ? null : { at: retired_at.toISOString(), by: retired_by, reason: retired_reason ?? '' },
    health: row.type === 'host' ? healthOf(row, check) : null,
    created_at: created_at.toISOString(),
    updated_at: updated_at.toISOString(),
  };
}

export interface EntityFilter {
  type?: EntityType;
  state?: EntityLifecycle;
  /** Default 'active': retired entities are left out. 'all': both; 'only': retired ones only. */
  retired?: 'active' | 'all' | 'only';
}

/** Every entity matching the filter, by slug. The inventory is a fleet, not a log: it is listed whole. */
export async function listEntities(db: Queryable, filter: EntityFilter = {}): Promise<EntityView[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.type !== undefined) where.push(`e.type = $${params.push(filter.type)}`);
  if (filter.state !== undefined) where.push(`e.state = $${params.push(filter.state)}`);
  const retired = filter.retired ?? 'active';
  if (retired === 'active') where.push('e.retired_at IS NULL');
  if (retired === 'only') where.push('e.retired_at IS NOT NULL');
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM ${FROM} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY e.slug`, params);
  return rows.map(toView);
}

/** One entity, retired or not; a host comes with the slugs of its guests (destroyed ones included: their state says so). */
export async function getEntity(db: Queryable, slug: string): Promise<EntityView | null> {
  const { rows } = await db.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE e.slug = $1`, [slug]);
  if (rows[0] === undefined) return null;
  const entity = toView(rows[0]);
  if (entity.type !== 'host') return entity;
  const children = await db.query<{ slug: string }>('SELECT slug FROM entities WHERE parent = $1 ORDER BY slug', [slug]);
  return { ...entity, children: children.rows.map((r) => r.slug) };
}

/** The hosts a reachability check looks at: active, not retired, with an SSH address. */
export async function hostsToCheck(db: Queryable): Promise<Array<{ slug: string; address: string; port: number; user: string; host_key: string | null }>> {
  const { rows } = await db.query<{ slug: string; ssh_host: string; ssh_port: number; ssh_user: string; host_key: string | null }>(
    `SELECT slug, ssh_host, ssh_port, ssh_user, host_key FROM entities
     WHERE type = 'host' AND state = 'active' AND retired_at IS NULL AND ssh_host IS NOT NULL AND ssh_port IS NOT NULL AND ssh_user IS NOT NULL ORDER BY slug`,
  );
  return rows.map((r) => ({ slug: r.slug, address: r.ssh_host, port: Number(r.ssh_port), user: r.ssh_user, host_key: r.host_key }));
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
