// Which fleet entities a tool call touched, read from its arguments, so sessions can be found by entity
// ("every session that touched lxc:rclone") without parsing transcripts.

/** Argument names that carry entity slugs in the agent's tools. */
const ENTITY_KEYS = ['target', 'targets', 'slug', 'from', 'to', 'about', 'entity', 'entities', 'parent'] as const;

/** kind:name, e.g. host:strong, lxc:rclone, vm:zimaos, pool:ludo-lvm; a URL or a path never matches. */
const SLUG = /^[a-z][a-z0-9_-]*:[A-Za-z0-9._@-]+$/;

export function entitySlugsIn(args: Record<string, unknown>): string[] {
  const slugs = new Set<string>();
  for (const key of ENTITY_KEYS) {
    const value: unknown = args[key];
    const candidates: readonly unknown[] = Array.isArray(value) ? value : [value];
    for (const candidate of candidates) {
      if (typeof candidate === 'string' && SLUG.test(candidate)) slugs.add(candidate);
    }
  }
  return [...slugs].sort();
}
