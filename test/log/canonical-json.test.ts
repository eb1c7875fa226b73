// The log's RFC 8785 serializer (src/log/canonical-json.ts) against the `canonicalize` package it stands in for:
// the RFC's own examples, what I-JSON refuses, and a generated corpus serialized alike value for value; and a
// leaf's envelope, written in its key order without sorting, against the package's output of the same object.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/log/canonical-json.ts';
import { type LeafEvent, columnEvent, leafOf } from '../../src/log/leaf.ts';
import { leafColumns, rawLeafHashes } from '../support/leaf-columns.ts';
import { leafHash } from '../../src/log/merkle.ts';

/** A small deterministic generator (mulberry32), so that a failure names a seed that reproduces it. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHARS = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '\u2028', '\u20ac', '\ufb33', '😀', '\ud83d\ude00', '𝄞', 'ö', '\u0080'];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 5e-324, 1.7976931348623157e308, 333333333.3333333, 4.5, 0.002, 1e-27, -1.5e-10, 2 ** 53, Number('9007199254740993')];

function value(next: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const text = () => Array.from({ length: Math.floor(next() * 8) }, () => pick(CHARS)).join('');
  const kind = depth > 3 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  switch (kind) {
    case 0:
      return text();
    case 1:
      return next() < 0.5 ? pick(NUMBERS) : (next() - 0.5) * 10 ** Math.floor(next() * 40 - 20);
    case 2:
      return pick([true, false, null]);
    case 3:
      return Math.floor(next() * 1e6);
    case 4:
      return Array.from({ length: Math.floor(next() * 5) }, () => value(next, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: Math.floor(next() * 6) }, () => [text(), value(next, depth + 1)]));
  }
}

describe('canonicalJson (RFC 8785)', () => {
  it('serializes the RFC’s examples as the RFC does', () => {
    // RFC 8785 §3.2.3: keys sorted by their UTF-16 code units.
    const sorting = { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' };
    expect(canonicalJson(sorting)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    // RFC 8785 §3.2.2.3: numbers as ECMAScript writes them.
    expect(canonicalJson([Number('333333333.33333329'), 1e30, 4.5, 2e-3, 0.000000000000000000000000001, -0])).toBe('[333333333.3333333,1e+30,4.5,0.002,1e-27,0]');
    // RFC 8785 §3.2.4's input, its output.
    const input = { numbers: [Number('333333333.33333329'), 1e30, 4.5, 2e-3, 0.000000000000000000000000001], string: '\u20ac$\u000f\u000aA\'\u0042\u0022\u005c\\"/', literals: [null, true, false] };
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('refuses what I-JSON cannot hold, as the package does', () => {
    for (const [i, bad] of [Number.NaN, Number.POSITIVE_INFINITY, -Infinity, '\ud800', 'a\udc00b', { ['\ud83d']: 1 }, [1, '\ude00']].entries()) {
      expect(() => canonicalJson(bad), `case ${i}`).toThrow();
      expect(() => canonicalize(bad), `case ${i}`).toThrow();
    }
    expect(() => canonicalJson(10n)).toThrow(/bigint/);
    expect(() => canonicalJson(undefined)).toThrow(/not JSON/);
  });

  it('leaves out what JSON leaves out, and calls toJSON', () => {
    const v = { a: undefined, c: [undefined], d: new Date(0), e: { toJSON: () => ({ z: 1, y: 2 }) } };
    expect(canonicalJson(v)).toBe(canonicalize(v));
    expect(canonicalJson(v)).toBe('{"c":[null],"d":"1970-01-01T00:00:00.000Z","e":{"y":2,"z":1}}');
    // A function is left out as JSON.stringify leaves it out (the package writes `"b":undefined`, which is not
    // JSON; a log's values come from JSON.parse and never hold one).
    expect(canonicalJson({ b: () => 1, c: [() => 1] })).toBe('{"c":[null]}');
  });

  it('agrees with the canonicalize package on 5 000 generated values', () => {
    for (let seed = 1; seed <= 5_000; seed++) {
      const v = value(rng(seed), 0);
      expect(canonicalJson(v), `seed ${seed}`).toBe(canonicalize(v));
    }
  });
});

describe('a leaf’s envelope', () => {
  const envelope = (e: LeafEvent, sha: string) => canonicalize({ position: e.position, stream: e.stream, version: e.version, type: e.type, recorded_at: e.recordedAt, metadata: e.metadata, data_sha256: sha })!;
  const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

  it('is the package’s canonical JSON of the envelope, whatever the metadata and data, redacted or not, raw or parsed', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const next = rng(seed);
      const event: LeafEvent = {
        position: 1 + Math.floor(next() * 1e9),
        stream: `session-${Math.floor(next() * 1e6)}`,
        version: Math.floor(next() * 100),
        type: next() < 0.5 ? 'ToolCallCompleted' : 'MessagePosted',
        recordedAt: '2026-12-06T23:05:55.468664Z',
        metadata: seed % 7 === 0 ? undefined : value(next, 1),
        data: value(next, 0),
      };
      const expected = envelope(event, sha256Hex(canonicalize(event.data)!));
      expect(leafOf(event).toString('utf8'), `seed ${seed}`).toBe(expected);
      if (event.metadata === undefined) continue;
      const raw = { position: event.position, stream: event.stream, version: event.version, type: event.type, recordedAt: event.recordedAt, metadataJson: JSON.stringify(event.metadata), dataJson: JSON.stringify(event.data) };
      const parsed = columnEvent(leafColumns([raw]), 0, undefined);
      expect([canonicalJson(parsed.metadata), canonicalJson(parsed.data)]).toEqual([canonicalJson(event.metadata), canonicalJson(event.data)]);
      expect(rawLeafHashes([raw]).equals(leafHash(Buffer.from(expected))), `seed ${seed}`).toBe(true);
      // Redacted: the leaf commits to the recorded hash, whatever the data is now.
      const redaction = { position: event.position + 1, dataSha256: 'ab'.repeat(32), actor: { role: 'operator', id: 'op' }, reason: 'a secret' };
      const redacted = envelope(event, redaction.dataSha256);
      expect(leafOf({ ...event, data: '[redacted]', redaction }).toString('utf8')).toBe(redacted);
      expect(rawLeafHashes([{ ...raw, dataJson: '"[redacted]"', redaction }]).equals(leafHash(Buffer.from(redacted)))).toBe(true);
    }
  });
});
