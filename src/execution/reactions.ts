// What follows a command's success in the inventory: a `pct create` on a host registers the new container, a
// `pct destroy` marks it destroyed — so the fleet the agent sees next matches what it just did. A slug that already
// names another live guest is never re-pointed: the conflict is logged and the inventory left as it was.
import { inventoryEffect } from '../domain/entity/follow.ts';
import { loadEntity, registerEntities, setEntityState } from '../commands/entity.ts';
import type { CommandContext, CommandDeps } from '../commands/context.ts';
import { getEntity } from '../projections/entities.ts';
import type { ExecTarget } from '../ports/executor.ts';

export async function followInventory(deps: CommandDeps, target: Extract<ExecTarget, { kind: 'host' }>, command: string, ctx: CommandContext, log: (message: string, error?: unknown) => void): Promise<void> {
  const effect = inventoryEffect(command);
  if (effect !== null) {
    try {
      if (effect.kind === 'created') {
        const slug = `lxc:${effect.hostname}`;
        const existing = await loadEntity(deps.store, slug);
        if (existing !== null && existing.state !== 'destroyed' && (existing.pveId !== effect.pveId || existing.parent !== target.host.slug)) {
          log(`inventory conflict: ${slug} is ${existing.parent ?? '?'}'s guest ${existing.pveId ?? '?'}, not re-pointed to ${target.host.slug}'s ${effect.pveId} after "${command.slice(0, 200)}"`);
          return;
        }
        await registerEntities(deps, [{ slug: `lxc:${effect.hostname}`, type: 'lxc', parent: target.host.slug, pve_id: effect.pveId, state: 'provisioning' }], ctx);
      } else {
        const slug = await containerSlug(deps, target.host.slug, effect.pveId);
        if (slug !== null) await setEntityState(deps, slug, 'destroyed', `pct destroy ${effect.pveId} succeeded`, ctx);
      }
    } catch (error) {
      log(`updating the inventory after ${effect.kind} ${effect.pveId}`, error);
    }
  }
}

/** The live container with this Proxmox id on this host; the host's guests come from the read model. */
async function containerSlug(deps: CommandDeps, hostSlug: string, pveId: number): Promise<string | null> {
  const guests = (await getEntity(deps.readDb, hostSlug))?.children ?? [];
  for (const slug of guests.filter((s) => s.startsWith('lxc:'))) {
    // The read model may lag behind; the entity's stream is the truth.
    const entity = await loadEntity(deps.store, slug);
    if (entity !== null && entity.pveId === pveId && entity.state !== 'destroyed') return slug;
  }
  return null;
}
