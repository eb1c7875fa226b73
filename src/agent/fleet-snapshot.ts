// A few lines about the fleet for the system prompt, from the inventory read model: what exists (retired
// entities are not offered), which hosts did not answer lately, what is waiting on an operator. Enough to
// orient the model; details come from its tools.
import type { Queryable } from '../ports/db.ts';
import { type EntityView, listEntities } from '../projections/entities.ts';
import { listApprovals } from '../projections/executions.ts';

const MAX_LISTED = 40;

export async function fleetSnapshot(db: Queryable): Promise<string> {
  const [entities, pending] = await Promise.all([listEntities(db), listApprovals(db, { status: 'pending', limit: 50 })]);
  // Retired entities are not listed; nor are the guests of a retired host, which no command reaches either.
  const listedHosts = new Set(entities.filter((e) => e.type === 'host').map((e) => e.slug));
  const live = entities.filter((e) => e.state !== 'destroyed' && (e.parent === null || listedHosts.has(e.parent)));
  const listed = live.slice(0, MAX_LISTED).map((e) => `- ${e.slug}${e.parent ? ` (on ${e.parent}, id ${String(e.pve_id)})` : ''}${e.state === 'active' ? '' : ` [${e.state}]`}${unreachable(e)}`);
  return [
    '## Fleet snapshot',
    live.length === 0 ? 'The inventory is empty.' : `${live.length} entities:`,
    ...listed,
    ...(live.length > MAX_LISTED ? [`… and ${live.length - MAX_LISTED} more (list_entities).`] : []),
    `Approvals waiting for an operator: ${pending.length}.`,
  ].join('\n');
}

/** " [unreachable since …: error]" for a host whose latest word was a failure. */
function unreachable(entity: EntityView): string {
  const health = entity.health;
  if (health?.reachable !== false) return '';
  return ` [unreachable since ${health.last_failure_at ?? '?'}: ${(health.last_error ?? '').slice(0, 120)}]`;
}
