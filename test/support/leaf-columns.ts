// Events written as the tests think of them (one object each, their JSON as text), turned into the columns the
// chain check hashes (src/log/leaf.ts LeafColumns), and their leaf hashes.
import { type LeafColumns, type LeafEvent, columnLeafHashes } from '../../src/log/leaf.ts';

export interface RawLeafEvent extends Omit<LeafEvent, 'data' | 'metadata'> {
  readonly metadataJson: string;
  readonly dataJson: string;
}

export function leafColumns(events: readonly RawLeafEvent[]): LeafColumns {
  return {
    positions: Float64Array.from(events, (e) => e.position),
    versions: Float64Array.from(events, (e) => e.version),
    streams: events.map((e) => e.stream),
    types: events.map((e) => e.type),
    recordedAt: events.map((e) => e.recordedAt),
    metadata: events.map((e) => e.metadataJson),
    data: events.map((e) => e.dataJson),
    redactedSha: events.map((e) => e.redaction?.dataSha256 ?? null),
  };
}

export const rawLeafHashes = (events: readonly RawLeafEvent[]): Buffer => columnLeafHashes(leafColumns(events));
