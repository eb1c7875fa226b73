// The one place an entity's stream name is built or parsed.
const PREFIX = 'entity-';

export function entityStream(slug: string): string {
  return PREFIX + slug;
}

export function entitySlugOf(streamName: string): string | null {
  return streamName.startsWith(PREFIX) ? streamName.slice(PREFIX.length) : null;
}
