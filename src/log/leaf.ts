// A sealed event's leaf: the exact bytes the Merkle tree hashes (docs/verifiable-log.md). RFC 8785 canonical JSON
// of the event's envelope with the SHA-256 of its canonical data, not the data itself, so that a payload can
// later be redacted while every proof over the leaf still holds.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** An event row as the log stores it, recorded_at already in the leaf's text form (leafTime). */
export interface LeafEvent {
  readonly position: number;
  readonly stream: string;
  readonly version: number;
  readonly type: string;
  readonly recordedAt: string;
  readonly metadata: unknown;
  readonly data: unknown;
  /** The payload was redacted (PayloadRedacted): the data is the redacted copy, the leaf commits to the original's hash. */
  readonly redaction?: Redaction;
}

/** What the first PayloadRedacted of an event recorded. */
export interface Redaction {
  /** The PayloadRedacted event's position. */
  readonly position: number;
  readonly dataSha256: string;
  readonly actor: unknown;
  readonly reason: string;
}

export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('not JSON: nothing to canonicalize');
  return text;
}

/** Lowercase hex SHA-256 of the data's canonical JSON: what a leaf commits to in place of the data. */
export function dataHash(data: unknown): string {
  return createHash('sha256').update(canonicalJson(data)).digest('hex');
}

/** The leaf of an event; `dataSha256` when the data is no longer at hand as it was (a redacted payload). */
export function leafOf(event: Omit<LeafEvent, 'data'> & ({ readonly data: unknown } | { readonly dataSha256: string })): Buffer {
  const envelope = {
    position: event.position,
    stream: event.stream,
    version: event.version,
    type: event.type,
    recorded_at: event.recordedAt,
    metadata: event.metadata,
    data_sha256: 'dataSha256' in event ? event.dataSha256 : 'redaction' in event && event.redaction ? event.redaction.dataSha256 : dataHash(event.data),
  };
  return Buffer.from(canonicalJson(envelope), 'utf8');
}
