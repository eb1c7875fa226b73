// Small helpers the read-model projections share for turning events into row values.
import type { ProjectedEvent } from '../ports/event-store.ts';
import { EventMetadata } from '../domain/messages.ts';
import { parseSessionEvent, type SessionEvent } from '../domain/session/events.ts';
import { sessionIdOf } from '../domain/session/stream.ts';

const OccurredAt = EventMetadata.pick({ occurred_at: true });

// Projections applied side by side (a live catch-up, a rebuild of several in one pass) are handed the same
// event objects: each session event is parsed once for all of them, not once per projection (three projections
// parsed every session event), and its entry (session id, parsed event, the event) is made once too. The entry
// rides on the event under a symbol: a WeakMap cost more in garbage collection than it saved (measured on a 1 M-event
// rebuild). Entries are shared, so projections treat them as read-only, as they treat the events themselves.
const ENTRY = Symbol('session event entry');

export interface SessionEventEntry {
  readonly sessionId: string;
  readonly event: SessionEvent;
  readonly stored: ProjectedEvent;
}

/** null: the event is not a session event. */
type WithEntry = ProjectedEvent & { [ENTRY]?: SessionEventEntry | null };

/** When the event happened, from its metadata: read models never consult the clock. */
export function occurredAt(event: ProjectedEvent): string {
  // A UTC timestamp, as every appender writes it (validated then), is taken as it is; anything else meets the schema.
  const at = (event.metadata as { occurred_at?: unknown }).occurred_at;
  return typeof at === 'string' && ISO_UTC.test(at) ? at : OccurredAt.parse(event.metadata).occurred_at;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A value as a jsonb parameter; undefined and null stay SQL NULL. */
export function pgJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function isoOrNull(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

/** The session events of a batch, parsed, in log order; events of other streams are left out. */
export function sessionEventsIn(events: readonly ProjectedEvent[]): SessionEventEntry[] {
  const out: SessionEventEntry[] = [];
  for (const stored of events as readonly WithEntry[]) {
    let entry = stored[ENTRY];
    if (entry === undefined) {
      const sessionId = sessionIdOf(stored.streamName);
      entry = sessionId === null ? null : { sessionId, event: parseSessionEvent(stored.type, stored.data), stored };
      stored[ENTRY] = entry;
    }
    if (entry !== null) out.push(entry);
  }
  return out;
}

/** Orders strings bytewise in UTF-8, as PostgreSQL's COLLATE "C" does (code point order, unlike `<` on UTF-16). */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
