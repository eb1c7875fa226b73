// A few lines about the fleet for the system prompt, from the inventory read model: what exists, what is
// waiting on an operator. Enough to orient the model; details come from its tools.
import type { Queryable } from '../ports/db.ts';
import { listEntities } from '../projections/entities.ts';
import { listApprovals } from '../projections/executions.ts';

const MAX_LISTED = 40;

export async function fleetSnapshot(db: Queryable): Promise<string> {
  const [entities, pending] = await Promise.all([listEntities(db), listApprovals(db, { status: 'pending', limit: 50 })]);
  const live = entities.filter((e) => e.state !== 'destroyed');
  const listed = live.slice(0, MAX_LISTED).map((e) => `- ${e.slug}${e.parent ? ` (on ${e.parent}, id ${String(e.pve_id)})` : ''}${e.state === 'active' ? '' : ` [${e.state}]`}`);
  return [
    '## Fleet snapshot',
    live.length === 0 ? 'The inventory is empty.' : `${live.length} entities:`,
    ...listed,
    ...(live.length > MAX_LISTED ? [`… and ${live.length - MAX_LISTED} more (list_entities).`] : []),
    `Approvals waiting for an operator: ${pending.length}.`,
  ].join('\n');
}
