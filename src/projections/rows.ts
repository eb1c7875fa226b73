// Small helpers the read-model projections share for turning events into row values.
import type { StoredEvent } from '../commands/event-store.ts';
import { EventMetadata } from '../domain/messages.ts';

const OccurredAt = EventMetadata.pick({ occurred_at: true });

/** When the event happened, from its metadata: read models never consult the clock. */
export function occurredAt(event: StoredEvent): string {
  return OccurredAt.parse(event.metadata).occurred_at;
}

/** A value as a jsonb parameter; undefined and null stay SQL NULL. */
export function pgJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function isoOrNull(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
