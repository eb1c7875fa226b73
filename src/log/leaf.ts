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

/** The i-th event of a page of columns, its JSON parsed; `redaction` what its redactedSha came from. */
export function columnEvent(c: LeafColumns, i: number, redaction: Redaction | undefined): LeafEvent {
  const event = { position: c.positions[i]!, stream: c.streams[i]!, version: c.versions[i]!, type: c.types[i]!, recordedAt: c.recordedAt[i]!, metadata: JSON.parse(c.metadata[i]!) as unknown, data: JSON.parse(c.data[i]!) as unknown };
  return redaction ? { ...event, redaction } : event;
}

/**
 * A page of events as columns, their JSON as the text the database wrote (src/log/store.ts eventColumnsAfter):
 * what the leaves are hashed from, here or on a leaf thread. A structured clone of a few arrays of strings costs a
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

/** The leaf hashes of a page, in its order, 32 bytes each in one buffer. */
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
