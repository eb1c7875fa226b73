// A sealed event's leaf: the exact bytes the Merkle tree hashes (docs/verifiable-log.md). RFC 8785 canonical JSON
// of the event's envelope with the SHA-256 of its canonical data, not the data itself, so that a payload can
// later be redacted while every proof over the leaf still holds.
import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';
import { HASH_BYTES, leafHashOfTextInto } from './merkle.ts';

export { canonicalJson };

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

/** An event as read for hashing elsewhere (a leaf thread, src/log/leaf-pool.ts): its JSON as the text the database wrote. */
export interface RawLeafEvent extends Omit<LeafEvent, 'data' | 'metadata'> {
  readonly metadataJson: string;
  readonly dataJson: string;
}

/** What the first PayloadRedacted of an event recorded. */
export interface Redaction {
  /** The PayloadRedacted event's position. */
  readonly position: number;
  readonly dataSha256: string;
  readonly actor: unknown;
  readonly reason: string;
}

/** Lowercase hex SHA-256 of the data's canonical JSON: what a leaf commits to in place of the data. */
export function dataHash(data: unknown): string {
  return hash('sha256', canonicalJson(data), 'hex');
}

type LeafInput = Omit<LeafEvent, 'data'> & ({ readonly data: unknown } | { readonly dataSha256: string });

/** The leaf of an event; `dataSha256` when the data is no longer at hand as it was (a redacted payload). */
export function leafOf(event: LeafInput): Buffer {
  return Buffer.from(leafText(event), 'utf8');
}

const dataSha256Of = (event: LeafInput): string =>
  'dataSha256' in event ? event.dataSha256 : 'redaction' in event && event.redaction ? event.redaction.dataSha256 : dataHash(event.data);

/** The leaf as text: leafOf's bytes are its UTF-8. */
function leafText(event: LeafInput): string {
  return envelopeText(event, event.metadata, dataSha256Of(event));
}

/**
 * canonicalJson of the envelope {position, stream, version, type, recorded_at, metadata, data_sha256}, written in
 * its canonical key order rather than sorted per event (the envelope's keys are fixed; test/log/canonical-json
 * checks it against the package's output). Metadata that is undefined has no member, as RFC 8785 has it.
 */
function envelopeText(event: Omit<LeafEvent, 'data' | 'metadata'>, metadata: unknown, dataSha256: string): string {
  const members = metadata === undefined ? '' : `"metadata":${canonicalJson(metadata)},`;
  return `{"data_sha256":${canonicalJson(dataSha256)},${members}"position":${canonicalJson(event.position)},"recorded_at":${canonicalJson(event.recordedAt)},"stream":${canonicalJson(event.stream)},"type":${canonicalJson(event.type)},"version":${canonicalJson(event.version)}}`;
}

/** The event a raw read stands for, its JSON parsed. */
export function parsedEvent(raw: RawLeafEvent): LeafEvent {
  const event = { position: raw.position, stream: raw.stream, version: raw.version, type: raw.type, recordedAt: raw.recordedAt, metadata: JSON.parse(raw.metadataJson) as unknown, data: JSON.parse(raw.dataJson) as unknown };
  return raw.redaction ? { ...event, redaction: raw.redaction } : event;
}

/** The i-th event of a page of columns, its JSON parsed; `redaction` what its redactedSha came from. */
export function columnEvent(c: LeafColumns, i: number, redaction: Redaction | undefined): LeafEvent {
  const event = { position: c.positions[i]!, stream: c.streams[i]!, version: c.versions[i]!, type: c.types[i]!, recordedAt: c.recordedAt[i]!, metadata: JSON.parse(c.metadata[i]!) as unknown, data: JSON.parse(c.data[i]!) as unknown };
  return redaction ? { ...event, redaction } : event;
}

/** The leaf hashes of raw events, in their order, 32 bytes each in one buffer. */
export function rawLeafHashes(events: readonly RawLeafEvent[]): Buffer {
  return columnLeafHashes(leafColumns(events));
}

/**
 * Raw events as columns: what a leaf thread is sent. A structured clone of a few arrays of strings costs a
 * fraction of one of as many objects, on both sides of the thread.
 */
export interface LeafColumns {
  readonly positions: Float64Array<ArrayBuffer>;
  readonly versions: Float64Array<ArrayBuffer>;
  readonly streams: string[];
  readonly types: string[];
  readonly recordedAt: string[];
  readonly metadata: string[];
  readonly data: string[];
  /** The redacted events' recorded data hashes, null where not redacted. */
  readonly redactedSha: (string | null)[];
}

export function leafColumns(events: readonly RawLeafEvent[]): LeafColumns {
  const n = events.length;
  const columns: LeafColumns = { positions: new Float64Array(n), versions: new Float64Array(n), streams: [], types: [], recordedAt: [], metadata: [], data: [], redactedSha: [] };
  for (let i = 0; i < n; i++) {
    const e = events[i]!;
    columns.positions[i] = e.position;
    columns.versions[i] = e.version;
    columns.streams.push(e.stream);
    columns.types.push(e.type);
    columns.recordedAt.push(e.recordedAt);
    columns.metadata.push(e.metadataJson);
    columns.data.push(e.dataJson);
    columns.redactedSha.push(e.redaction?.dataSha256 ?? null);
  }
  return columns;
}

export function columnLeafHashes(c: LeafColumns): Buffer {
  const n = c.positions.length;
  const out = Buffer.allocUnsafe(n * HASH_BYTES);
  for (let i = 0; i < n; i++) {
    // A redacted event's data is the redacted copy: its leaf commits to the original's hash, so it is not parsed.
    const sha = c.redactedSha[i] ?? dataHash(JSON.parse(c.data[i]!));
    const event = { position: c.positions[i]!, stream: c.streams[i]!, version: c.versions[i]!, type: c.types[i]!, recordedAt: c.recordedAt[i]! };
    leafHashOfTextInto(envelopeText(event, JSON.parse(c.metadata[i]!), sha), out, i * HASH_BYTES);
  }
  return out;
}
