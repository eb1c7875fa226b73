// Which fleet entities a tool call touched, read from its arguments, so sessions can be found by entity
// ("every session that touched lxc:rclone") without parsing transcripts.

/** Argument names that carry entity slugs in the agent's tools. */
const ENTITY_KEYS = ['target', 'targets', 'slug', 'from', 'to', 'about', 'entity', 'entities', 'parent'] as const;

/** kind:name, e.g. host:strong, lxc:rclone, vm:zimaos, pool:ludo-lvm; a URL or a path never matches. */
const SLUG = /^[a-z][a-z0-9_-]*:[A-Za-z0-9._@-]+$/;

export function entitySlugsIn(args: Record<string, unknown>): string[] {
  // Called for every tool call a projection replays: no allocation but the answer.
  const slugs: string[] = [];
  for (const key of ENTITY_KEYS) {
    const value: unknown = args[key];
    if (Array.isArray(value)) {
      for (const candidate of value as unknown[]) addSlug(slugs, candidate);
    } else {
      addSlug(slugs, value);
    }
  }
  return slugs.sort();
}

function addSlug(slugs: string[], candidate: unknown): void {
  if (typeof candidate === 'string' && SLUG.test(candidate) && !slugs.includes(candidate)) slugs.push(candidate);
}
