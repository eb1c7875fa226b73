// inPlaceParser must answer exactly as zod's parse does (the same value, or the same error) for every session
// event schema, while returning a valid payload itself instead of a copy. Checked differentially: payloads of
// every event type from generated sessions (the real deciders' output, through JSON as the store returns it),
// each also broken in every way one value can be.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessions } from '../../bench/generator.ts';
import { modelCall } from '../support/model-calls.ts';
import { Rng } from '../../bench/prng.ts';
import { inPlaceParser } from '../../src/domain/in-place.ts';
import { EventMetadata } from '../../src/domain/messages.ts';
import { parseSessionEvent, sessionEventSchemas, type SessionEventType } from '../../src/domain/session/events.ts';

type Outcome = { ok: true; value: unknown } | { ok: false; issues: unknown };

function outcome(parse: (data: unknown) => unknown, data: unknown): Outcome {
  try {
    return { ok: true, value: parse(data) };
  } catch (error) {
    if (!(error instanceof z.ZodError)) throw error;
    return { ok: false, issues: error.issues };
  }
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Payloads of every session event type, as the store hands them back. */
function samples(): Map<SessionEventType, unknown[]> {
  const byType = new Map<SessionEventType, unknown[]>();
  const keep = (type: SessionEventType, data: unknown) => {
    const list = byType.get(type) ?? [];
    if (list.length < 12) list.push(clone(data));
    byType.set(type, list);
  };
  const generated = sessions(new Rng(20261130), { from: Date.parse('2026-11-01T00:00:00Z'), to: Date.parse('2026-11-08T00:00:00Z'), count: 400 });
  for (let i = 0; i < 400; i++) {
    for (const append of generated.next().value!.appends) for (const event of append) keep(event.type as SessionEventType, event.data);
  }
  // The generator never deletes a session (the API does).
  keep('SessionDeleted', { reason: 'duplicate' });
  keep('SessionDeleted', { reason: null });
  // Nor hands one over (an operator does, through the API).
  keep('SessionHandedOver', { from: { role: 'operator', id: 'alice' }, to: { role: 'agent', id: 'rclone-bot' } });
  keep('SessionHandedOver', { from: { role: 'agent', id: 'rclone-bot' }, to: { role: 'operator', id: 'bob' } });
  // Nor calls a model (the agent does): a call reported in full, and a failed one the provider reported nothing of.
  keep('ModelCallRecorded', modelCall('t1', { cached_input_tokens: 512 }));
  keep('ModelCallRecorded', modelCall('t2', { attempt: 2, input_tokens: null, output_tokens: null, cached_input_tokens: null, first_token_ms: null, finish_reason: null, error: { kind: 'http', status: 429, code: 'rate_limit_exceeded', message: 'slow down' } }));
  return byType;
}

/** Every value a field could wrongly (or, for some schemas, rightly) hold. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2 ** 60,
  '',
  'x',
  'x'.repeat(201),
  '\u{1F600}'.repeat(200),
  '\u{1F600}'.repeat(201),
  '2026-13-01T00:00:00Z',
  '2026-11-30T08:00:00+01:00',
  true,
  [],
  [{}],
  {},
  { nested: 1 },
];

/** The payload with one value replaced (undefined: removed) or one key added, at the top and one level down. */
function* variants(data: unknown): Generator<{ what: string; data: unknown }> {
  if (typeof data !== 'object' || data === null) return;
  yield { what: 'an unknown key', data: { ...data, unexpected: 'x' } };
  for (const [key, value] of Object.entries(data)) {
    for (const replacement of REPLACEMENTS) {
      const copy = clone(data) as Record<string, unknown>;
      if (replacement === undefined) delete copy[key];
      else copy[key] = replacement;
      yield { what: `${key} = ${JSON.stringify(replacement)}`, data: copy };
    }
    const inner = Array.isArray(value) ? value[0] : value;
    for (const variant of variants(inner)) {
      const copy = clone(data) as Record<string, unknown>;
      copy[key] = Array.isArray(value) ? [variant.data, ...value.slice(1)] : variant.data;
      yield { what: `${key}: ${variant.what}`, data: copy };
    }
  }
}

describe('inPlaceParser', () => {
  const byType = samples();

  it('draws on payloads of every session event type', () => {
    expect([...byType.keys()].sort()).toEqual(Object.keys(sessionEventSchemas).sort());
  });

  it('answers as zod does for every payload and every way of breaking it, and copies only what zod changes', () => {
    let compared = 0;
    let rejected = 0;
    for (const [type, payloads] of byType) {
      const schema = sessionEventSchemas[type] as z.ZodType;
      const parse = inPlaceParser(schema);
      for (const payload of payloads) {
        const valid = outcome(parse, payload);
        expect(valid, type).toEqual({ ok: true, value: payload });
        if (valid.ok) expect(valid.value, `${type}: a valid payload is returned as it is`).toBe(payload);
        for (const variant of variants(payload)) {
          const input = clone(variant.data);
          const ours = outcome(parse, input);
          expect(ours, `${type}, ${variant.what}`).toEqual(outcome((data) => schema.parse(data), variant.data));
          expect(input, `${type}, ${variant.what}: the input is left as it was`).toEqual(variant.data);
          compared += 1;
          if (!ours.ok) rejected += 1;
        }
      }
    }
    // The variants reach both answers, many times over.
    expect(rejected).toBeGreaterThan(1_000);
    expect(compared - rejected).toBeGreaterThan(1_000);
  });

  it('returns a stripped copy where zod strips, and leaves the stored payload alone', () => {
    const stored = { approval_id: 'a-1', reason: 'no', extra: { deep: true } };
    const event = parseSessionEvent('ApprovalDenied', stored);
    expect(event).toEqual({ type: 'ApprovalDenied', data: { approval_id: 'a-1', reason: 'no' } });
    expect(event.data).not.toBe(stored);
    expect(stored.extra).toEqual({ deep: true });
    const exact = { approval_id: 'a-1', reason: 'no' };
    expect(parseSessionEvent('ApprovalDenied', exact).data).toBe(exact);
  });

  it("keeps a loose schema's unknown keys, as zod does, without copying", () => {
    const parse = inPlaceParser(EventMetadata.pick({ occurred_at: true, actor: true }).loose());
    const metadata = { occurred_at: '2026-11-30T08:00:00.000Z', actor: { role: 'agent', id: 'nomos' }, correlation_id: 'c', schema_version: 1 };
    expect(parse(metadata)).toBe(metadata);
    // Actor is strict: an unknown key there is an error, from zod.
    expect(() => parse({ ...metadata, actor: { role: 'agent', id: 'nomos', extra: 1 } })).toThrow(z.ZodError);
    expect(() => parse({ ...metadata, occurred_at: 'yesterday' })).toThrow(/occurred_at|datetime/);
  });
});
